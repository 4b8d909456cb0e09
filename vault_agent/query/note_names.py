"""Name resolution against the pinned snapshot: the `NameIndex` and homes of `names.py`.

- `NoteNames`: the live notes of one snapshot by path (any case), file name, title and
  alias (each segment's `SegmentNames`, with the snapshot's live masks applied), and close
  names for NOT_FOUND: candidates from the full-text engine's name fields (title, aliases,
  file name; an unknown word matches them within one or two edits), ranked by how close
  each candidate's names are to what was typed.
- `SnapshotHome`: where the per-note contracts (outline, tree, sections, facets, related)
  look paths up: the snapshot, with the case-twin rule (a file that exists as typed but is
  not indexed yet never answers for its twin).
- `resolve_on_disk` / `resolve_indexed`: the two entry points, both `names.resolve_name`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault_agent.errors import IndexIncompatible, IndexNotFound, InvalidPath, NotFound, VaultAgentError
from vault_agent.names import (
    MAX_LISTED,
    FileHome,
    NameIndex,
    NamesFn,
    Resolution,
    ambiguous,
    name_key,
    parse_name,
    resolve_name,
    strip_extension,
)
from vault_agent.paths import Resolved, Vault, display
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.segment_names import SegmentNames, file_stem
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.text import nfc, tokenize

_FILE_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")  # "image.png", not "Meeting v1.2"
UNINDEXED = " (new notes appear after the next index)"
CLOSE_POOL = 200  # engine hits (chunks) read to find candidate notes
CLOSE_MIN_RATIO = 0.5  # a candidate this far from every spelling of what was typed is no suggestion
NAME_FIELDS = ("title", "aliases", "filename")

Engine = Callable[[], "tuple[Any, Any] | None"]


def closeness(typed: str, name: str) -> float:
    """How alike two name keys are (0..1): difflib's ratio, of the texts or of their words in
    sorted order, whichever is higher ("Lighthouse Projekt" is close to "Project Lighthouse")."""
    direct = difflib.SequenceMatcher(None, typed, name).ratio()
    words = difflib.SequenceMatcher(
        None, " ".join(sorted(typed.split())), " ".join(sorted(name.split()))
    ).ratio()
    return max(direct, words)


class NoteNames:
    """The notes of one pinned snapshot by name (implements names.NameIndex)."""

    def __init__(self, live: LiveNotes, extensions: tuple[str, ...], engine: Engine) -> None:
        self.live = live
        self.extensions = extensions
        self._engine = engine

    def _paths(self, pick: Callable[[SegmentNames], list[int]]) -> list[str]:
        out: set[str] = set()
        for cols, mask in self.live.segment_views():
            out.update(cols.paths[row] for row in pick(cols.names) if mask is None or mask[row])
        return sorted(out)

    def by_path(self, rel: str) -> list[str]:
        want = nfc(rel).casefold()
        return [p for p in self.by_name(name_key(file_stem(rel))) if nfc(p).casefold() == want]

    def by_name(self, stem: str) -> list[str]:
        key = name_key(stem)
        return self._paths(lambda names: names.by_name(key))

    def by_title(self, key: str) -> list[str]:
        return self._paths(lambda names: names.by_title(key))

    def by_alias(self, key: str) -> list[str]:
        return self._paths(lambda names: names.by_alias(key))

    def _names(self, path: str) -> list[str]:
        """Every name a note answers to, as keys: file name without extension, title, aliases."""
        out = [name_key(file_stem(path))]
        for cols, mask in self.live.segment_views():
            row = cols.row_of.get(path)
            if row is None:
                continue
            if mask is None or mask[row]:
                title = cols.names.title(row)
                out += [name_key(title)] if title else []
                out += [name_key(a) for a in cols.names.aliases(row)]
            break
        return out

    def close_names(self, typed: str, limit: int) -> list[str]:
        """Up to `limit` notes named like `typed`: engine candidates ranked by how close their
        names are to the typed name (its last path component); a typed folder breaks ties."""
        req = parse_name(typed)
        whole = name_key(strip_extension(req.target, self.extensions))
        wanted = whole.rsplit("/", 1)[-1]
        if not wanted:
            return []
        scored = []
        for path in self._candidates(wanted):
            best = max(closeness(wanted, name) for name in self._names(path))
            if best >= CLOSE_MIN_RATIO:
                where = name_key(strip_extension(path, self.extensions))
                tie = difflib.SequenceMatcher(None, whole, where).ratio() if "/" in whole else 0.0
                scored.append((-round(best, 6), -round(tie, 6), path))
        return [path for _, _, path in sorted(scored)[:limit]]

    def _candidates(self, wanted: str) -> list[str]:
        """Notes whose name fields hold the words of `wanted` (or words one or two edits away)."""
        try:
            engine = self._engine()
        except VaultAgentError:  # no usable engine dir: no suggestions, never a failure
            return []
        if engine is None:
            return []
        import tantivy  # imported where used: the engine is only opened for a NOT_FOUND

        from vault_agent.query.search_engine import fuzzy_name_clauses
        from vault_agent.search_fields import FIELD_BOOSTS, PATH_FIELD, analyze_terms

        index, searcher = engine
        terms = analyze_terms(tokenize(wanted))
        if not terms or searcher.num_docs == 0:
            return []
        query = tantivy.Query
        clauses = [
            (tantivy.Occur.Should, query.boost_query(query.term_query(index.schema, f, t), FIELD_BOOSTS[f]))
            for t in terms
            for f in NAME_FIELDS
        ]
        clauses += [(tantivy.Occur.Should, q) for q in fuzzy_name_clauses(index, searcher, terms)]
        hits = searcher.search(query.boolean_query(clauses), CLOSE_POOL, count=False).hits
        seen: dict[str, None] = {}
        for _score, address in hits:
            seen.setdefault(str(searcher.doc(address).get_first(PATH_FIELD)), None)
        return list(seen)


def names_of(reader: SnapshotReader, view: SnapshotView) -> NoteNames:
    """The NameIndex of the snapshot a request pinned."""
    from vault_agent.query.search_engine import open_engine

    index_dir = Path(reader.settings.index_dir)
    engine_dir = view.manifest.search_index
    return NoteNames(view.live, reader.vault.extensions, lambda: open_engine(index_dir, engine_dir))


def snapshot_names(reader: SnapshotReader | None) -> NamesFn:
    """Names for file tools: pins the newest snapshot when first needed; None without one
    (then file tools resolve paths only, and say that names need the index)."""

    def names() -> NameIndex | None:
        if reader is None:
            return None
        try:
            with reader.acquire() as view:
                return names_of(reader, view)  # plain objects: usable once the pin is released
        except (IndexNotFound, IndexIncompatible):
            return None

    return names


class SnapshotHome:
    """The snapshot as the home of the per-note contracts (names.Home).

    The file system is asked one thing: whether the typed path exists exactly (a link, a
    path through a link or outside the snapshot counts as absent, so no answer tells
    anything about it). A folder, or a name with another file extension, that resolves to
    no note is INVALID_PATH ("not a note") rather than NOT_FOUND.
    """

    def __init__(self, vault: Vault, names: NoteNames, tool: str) -> None:
        self.vault = vault
        self.names = names
        self.tool = tool
        self._not_note: str | None = None

    def find(self, rel: str) -> tuple[str, bool] | None:
        if self.names.live.lookup(rel) is not None:
            return rel, True
        on_disk = self._on_disk(rel)
        if on_disk is not None and not on_disk.is_dir and self.vault.is_note_name(rel):
            # A file that exists as typed never answers for its case twin's indexed note.
            raise NotFound(
                f"'{display(rel)}' is not indexed yet; new notes appear after the next index "
                "(run 'vault-agent index', or serve with --watch)"
            )
        if self._not_note is None and (
            (on_disk is not None and on_disk.is_dir)
            or (_FILE_EXTENSION.search(rel) and not self.vault.is_note_name(rel))
        ):
            self._not_note = rel
        hits = self.names.by_path(rel)
        if len(hits) > 1:
            raise ambiguous(rel, "path in another case", hits[: MAX_LISTED + 1], self.tool, len(hits))
        return (hits[0], False) if hits else None

    def _on_disk(self, rel: str) -> Resolved | None:
        try:
            return self.vault.resolve(rel, match="normalized")
        except (NotFound, InvalidPath):  # missing, a link, or through a link: not in the vault
            return None

    def miss(self) -> VaultAgentError | None:
        if self._not_note is None:
            return None
        exts = ", ".join(self.vault.extensions)
        return InvalidPath(f"'{display(self._not_note)}' is not a note (notes end with {exts})")


def resolve_indexed(reader: SnapshotReader, view: SnapshotView, raw: object, tool: str) -> Resolution:
    """The indexed note `raw` names, in the pinned snapshot (per-note contracts).

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound: see names.resolve_name.
    """
    names = names_of(reader, view)
    home = SnapshotHome(reader.vault, names, tool)
    return resolve_name(raw, reader.vault, home, lambda: names, tool, unindexed=UNINDEXED)


def resolve_on_disk(
    vault: Vault, reader: SnapshotReader | None, raw: object, tool: str, *, folders: bool = False
) -> tuple[Resolved, Resolution]:
    """The file `raw` names on disk (file tools); names, titles and aliases from the snapshot.

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound: see names.resolve_name.
    """
    home = FileHome(vault, tool, folders=folders)
    found = resolve_name(raw, vault, home, snapshot_names(reader), tool, allow_root=folders)
    return home.resolved[found.path], found
