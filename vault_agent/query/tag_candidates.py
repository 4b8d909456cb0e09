"""Which notes may hold a tag (or its nested children), from the pinned snapshot.

The tag rename (`files.rename_tag`) reads each candidate's current bytes and decides there
(`tag_syntax.scan_tags`), so this is a superset of the notes it changes. It comes from the
snapshot's `tags` table (frontmatter `tags` values and inline `#tags`, casefolded, each with
its parents: `a/b` also has a row `a`), so the tag and its children are the rows equal to
the tag. The table cannot hold three kinds of tag occurrence the rename edits, so these
notes are candidates too, from cheap columns:

- a frontmatter key `tag`, `Tags`, `TAG`… (the index reads only `tags`): `notes.fm_fields`;
- a frontmatter `tags` list item holding a blank or comma (`["a b"]`): the index keeps it
  as one tag, the rename splits it into two: `notes.tags`;
- the body of a note too large for the indexer's block parse (`notes.too_large`: no inline
  tags were read): its chunks' text is searched for `#tag` in any letter case.

Known gap (the indexer's inline-tag rules, `indexer/inline_tags.py`, differ from the
rename's, `tag_syntax`): a body tag the indexer does not read as one, `#` right after
`**`, `_`, `==` or a table pipe without a blank (`**#tag**`, `|#tag|`), or a tag running
into U+2E00–2E7F or U+FEFF, is renamed only in a note that is a candidate for another
reason. Aligning `inline_tags` with `tag_syntax` (a parser version bump) closes it for
`vault_query`'s tag filters too.
"""

from __future__ import annotations

import unicodedata

from vault_agent.contracts import Outcome
from vault_agent.query.snapshot import SnapshotReader

_SQL = r"""
SELECT path FROM tags WHERE tag = $key
UNION
SELECT path FROM notes
WHERE len(list_filter(fm_fields, lambda f: lower(f) IN ('tag', 'tags') AND f <> 'tags')) > 0
   OR len(list_filter(tags, lambda t: regexp_matches(t, '[,\s]'))) > 0
"""
# The few too-large notes by name first: a subquery would read every chunk's path (~160 ms
# at 100k notes); a list of paths lets the path-sorted chunk segments skip row groups.
_TOO_LARGE_SQL = "SELECT path FROM notes WHERE too_large"
_TEXT_SQL = """
SELECT DISTINCT path FROM chunks
WHERE path IN (SELECT unnest($paths::VARCHAR[]))
  AND (strpos(lower(text), $nfc) > 0 OR strpos(lower(text), $nfd) > 0)
"""


def tag_candidates(reader: SnapshotReader, tag: str) -> Outcome[list[str]]:
    """Paths of the notes that may hold `tag` or `tag/…` (a name without `#`), path order.

    Raises:
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    name = unicodedata.normalize("NFC", tag)
    lower = name.lower()
    text = {
        "nfc": "#" + lower,
        "nfd": "#" + unicodedata.normalize("NFD", lower),  # chunk text keeps the file's own form
    }
    with reader.acquire() as view:
        con = view.con
        # the table's form: the NFC tag casefolded (indexer/parse.py)
        paths = {p for (p,) in con.execute(_SQL, {"key": name.casefold()}).fetchall()}
        too_large = [p for (p,) in con.execute(_TOO_LARGE_SQL).fetchall()]
        if too_large:
            paths.update(p for (p,) in con.execute(_TEXT_SQL, {"paths": too_large, **text}).fetchall())
        return Outcome(data=sorted(paths), warnings=view.warnings(), freshness=view.freshness)
