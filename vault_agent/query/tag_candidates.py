"""Which notes may hold a tag (or its nested children), from the pinned snapshot.

The tag rename (`files.rename_tag`) reads each candidate's current bytes and decides there,
so this is a superset: frontmatter `tags` values equal to the tag or under it, notes with a
`tag`/`Tags`-like frontmatter key (the index keeps only `tags` values), and notes whose
chunk text holds `#tag` in any letter case (code and all: the rename skips code).
When the snapshot gains an inline-tags column, only this function changes.
"""

from __future__ import annotations

import unicodedata

from vault_agent.contracts import Outcome
from vault_agent.query.snapshot import SnapshotReader

_SQL = """
SELECT path FROM notes
WHERE len(list_filter(tags, lambda t: lower(t) = $key OR starts_with(lower(t), $key || '/'))) > 0
   OR len(list_filter(fm_fields, lambda f: lower(f) IN ('tag', 'tags') AND f <> 'tags')) > 0
UNION
SELECT DISTINCT path FROM chunks
WHERE strpos(lower(text), $nfc) > 0 OR strpos(lower(text), $nfd) > 0
ORDER BY path
"""


def tag_candidates(reader: SnapshotReader, tag: str) -> Outcome[list[str]]:
    """Paths of the notes that may hold `tag` or `tag/…` (a name without `#`), path order.

    Raises:
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    key = unicodedata.normalize("NFC", tag).lower()
    params = {
        "key": key,
        "nfc": "#" + key,
        "nfd": "#" + unicodedata.normalize("NFD", key),  # chunk text keeps the file's own form
    }
    with reader.acquire() as view:
        paths = [p for (p,) in view.con.execute(_SQL, params).fetchall()]
        return Outcome(data=paths, warnings=view.warnings(), freshness=view.freshness)
