"""Per-note structure from the snapshot: NoteOutline (seed 001) and DocumentTree.

Also the one path resolver of the per-note contracts (sections.py uses it): caller text
→ a note of the pinned snapshot, without touching the file system, so nothing about files
outside the snapshot (and so outside the vault) can leak.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from vault_agent.contracts import MAX_NOTE_CHARS_FOR_STRUCTURE, MAX_OUTLINE_HEADINGS, Outcome, WarningItem
from vault_agent.errors import InvalidPath, NotFound, TooLarge
from vault_agent.paths import Vault, display, exists_exactly, normalize_rel_path
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.models import DocNode, DocRoot, DocumentTree, NoteOutline, OutlineHeading
from vault_agent.query.segment_headings import SegmentHeadings
from vault_agent.query.snapshot import SnapshotReader, SnapshotView

# Every per-note answer with headings says when they are incomplete (the flag alone was easy
# to miss): more than the cap, or a note too large for its structure to be indexed at all.
HEADINGS_CAPPED = WarningItem(
    code="HEADINGS_TRUNCATED",
    message=f"this note has more than {MAX_OUTLINE_HEADINGS} headings; only the first "
    f"{MAX_OUTLINE_HEADINGS} are listed. Read the rest of the note with vault_read",
)
HEADINGS_NOT_INDEXED = WarningItem(
    code="HEADINGS_TRUNCATED",
    message=f"this note is over {MAX_NOTE_CHARS_FOR_STRUCTURE:,} characters, so its headings are not "
    "indexed (get_note_outline answers TOO_LARGE); read it in ranges with vault_read",
)


def heading_warnings(truncated: bool) -> list[WarningItem]:
    return [HEADINGS_CAPPED] if truncated else []


@dataclass(frozen=True)
class NoteRow:
    path: str
    folder: str
    title: str | None
    facets_json: str
    segment_id: int
    headings: SegmentHeadings | None = None  # set when found through the request's live notes


@dataclass(frozen=True)
class HeadingRow:
    ordinal: int
    level: int
    text: str
    id: str
    body_available: bool


def check_note_path(vault: Vault, raw: object) -> str:
    """Caller text → a safe vault-relative note name; called before any snapshot is opened,
    so an unsafe path fails the same way whether or not an index exists (seed 004).

    Raises:
        InvalidPath: malformed, absolute, traversal, NUL, or not a note name.
        Forbidden: inside a protected folder.
    """
    rel = normalize_rel_path(raw)
    vault.check_not_protected(rel)
    if not vault.is_note_name(rel):
        raise InvalidPath(f"'{display(rel)}' is not a note (notes end with {', '.join(vault.extensions)})")
    return rel


def resolve_note(
    con: duckdb.DuckDBPyConnection, vault: Vault, raw: object, live: LiveNotes | None = None
) -> NoteRow:
    """The snapshot's note for caller text: exact path, else the one case-insensitive match.

    With the request's `live` notes the exact path is found without a query (a dict lookup
    per segment); the case-insensitive fallback is SQL either way.

    Raises:
        InvalidPath: malformed, absolute, traversal, NUL, or not a note name.
        Forbidden: inside a protected folder.
        NotFound: no note (or more than one case-variant) with that path in the snapshot.
    """
    rel = check_note_path(vault, raw)
    cols = "path, folder, title, facets_json, too_large, _seg"
    found = live.lookup(rel) if live is not None else None
    if found is not None:
        seg, f = found
        rows = [(f.path, f.folder, f.title, f.facets_json, f.too_large, seg)]
        headings: SegmentHeadings | None = f.headings
    elif live is not None:
        rows, headings = [], None
    else:
        headings = None
        rows = con.execute(f"SELECT {cols} FROM _notes WHERE path = ?", [rel]).fetchall()
    if not rows:
        # A file that exists as typed but is not indexed yet must not answer for its case
        # twin; otherwise the one case-insensitive match in the snapshot is the note.
        rows = [] if exists_exactly(vault, rel) else con.execute(
            f"SELECT {cols} FROM _notes WHERE lower(path) = lower(?) LIMIT 2", [rel]
        ).fetchall()
        if len(rows) != 1:
            raise NotFound(
                f"'{display(rel)}' is not an indexed note; check the path with 'tree' or 'search' "
                "(new notes appear after the next index)"
            )
    path, folder, title, facets_json, too_large, seg = rows[0]
    if too_large:
        raise TooLarge(
            f"'{display(path)}' is over {MAX_NOTE_CHARS_FOR_STRUCTURE:,} characters; its structure is not "
            "indexed. Read it in ranges with vault_read"
        )
    return NoteRow(
        path=path, folder=folder, title=title, facets_json=facets_json, segment_id=int(seg), headings=headings
    )


def note_headings(con: duckdb.DuckDBPyConnection, note: NoteRow) -> tuple[list[HeadingRow], bool]:
    """The first MAX_OUTLINE_HEADINGS headings in document order, and whether more exist."""
    if note.headings is not None:  # the segment's headings in memory: a slice, no query
        rows = note.headings.of(note.path, MAX_OUTLINE_HEADINGS + 1)
    else:
        table = SnapshotView.segment_table("headings", note.segment_id)  # path-sorted: pruned scan
        rows = con.execute(
            f"SELECT ordinal, level, text, id, body_available FROM {table} WHERE path = ? "
            "ORDER BY ordinal LIMIT ?",
            [note.path, MAX_OUTLINE_HEADINGS + 1],
        ).fetchall()
    heads = [
        HeadingRow(ordinal=o, level=int(lv), text=t, id=i, body_available=bool(b)) for o, lv, t, i, b in rows
    ]
    return heads[:MAX_OUTLINE_HEADINGS], len(heads) > MAX_OUTLINE_HEADINGS


def parents(heads: list[HeadingRow]) -> list[int | None]:
    """Index of each heading's parent: the nearest previous heading of a lower level."""
    out: list[int | None] = []
    stack: list[int] = []
    for idx, h in enumerate(heads):
        while stack and heads[stack[-1]].level >= h.level:
            stack.pop()
        out.append(stack[-1] if stack else None)
        stack.append(idx)
    return out


def _outcome(view: SnapshotView, data: object, truncated: bool) -> Outcome:  # type: ignore[type-arg]
    return Outcome(data=data, warnings=view.warnings() + heading_warnings(truncated), freshness=view.freshness)


def get_note_outline(reader: SnapshotReader, path: object) -> Outcome[NoteOutline]:
    """NoteOutline of one note (knowtation.note_outline/v1), read from the snapshot.

    Raises:
        InvalidPath, Forbidden, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    check_note_path(reader.vault, path)
    with reader.acquire() as view:
        note = resolve_note(view.con, reader.vault, path, view.live)
        heads, truncated = note_headings(view.con, note)
        data = NoteOutline(
            path=note.path,
            title=note.title,
            headings=[OutlineHeading(level=h.level, text=h.text, id=h.id) for h in heads],
            truncated=truncated,
        )
        return _outcome(view, data, truncated)


def get_document_tree(reader: SnapshotReader, path: object) -> Outcome[DocumentTree]:
    """DocumentTree of one note (knowtation.document_tree/v0): headings nested by level.

    Raises:
        InvalidPath, Forbidden, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    check_note_path(reader.vault, path)
    with reader.acquire() as view:
        note = resolve_note(view.con, reader.vault, path, view.live)
        heads, truncated = note_headings(view.con, note)
        root = DocRoot(children=[])
        nodes = [DocNode(id=h.id, level=h.level, text=h.text, children=[]) for h in heads]
        for idx, parent in enumerate(parents(heads)):
            (root.children if parent is None else nodes[parent].children).append(nodes[idx])
        data = DocumentTree(path=note.path, title=note.title, root=root, truncated=truncated)
        return _outcome(view, data, truncated)
