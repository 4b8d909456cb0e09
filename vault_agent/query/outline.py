"""Per-note structure from the snapshot: NoteOutline (seed 001) and DocumentTree.

Also how the per-note contracts (sections.py too) find their note: caller text → a note of
the pinned snapshot, by path or name (`names.resolve_name` with the snapshot as its home);
the file system is only asked whether the typed path exists exactly (the case-twin rule).
Each answer's warnings carry the read that follows (`NEXT_READ`), beside the raw contract.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb

from vault_agent.contracts import MAX_NOTE_CHARS_FOR_STRUCTURE, MAX_OUTLINE_HEADINGS, Outcome, WarningItem
from vault_agent.errors import NotFound, TooLarge
from vault_agent.names import Resolution, parse_name
from vault_agent.paths import Vault, display, normalize_rel_path
from vault_agent.query.models import DocNode, DocRoot, DocumentTree, NoteOutline, OutlineHeading
from vault_agent.query.note_names import resolve_indexed
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
    resolution: Resolution | None = None  # how the caller named it

    def warnings(self) -> list[WarningItem]:
        """NAME_RESOLVED when the caller named the note by anything but its exact path."""
        warning = self.resolution.warning() if self.resolution is not None else None
        return [warning] if warning else []


@dataclass(frozen=True)
class HeadingRow:
    ordinal: int
    level: int
    text: str
    id: str
    body_available: bool


def check_note_path(vault: Vault, raw: object) -> None:
    """Refuse unsafe caller text before any snapshot is opened, so it fails the same way
    whether or not an index exists (seed 004). Whether it names a note is decided later.

    Raises:
        InvalidPath: malformed, absolute, traversal, NUL. Forbidden: inside a protected folder.
    """
    vault.check_not_protected(normalize_rel_path(parse_name(raw).target))


def resolve_note(
    reader: SnapshotReader, view: SnapshotView, raw: object, tool: str, *, structure: bool = True
) -> NoteRow:
    """The snapshot's note for caller text, by path or name (names.resolve_name over the
    pinned snapshot: exact, case, extension, wikilink, basename, title, alias).

    Raises:
        InvalidPath: malformed, absolute, traversal, NUL, or a file that is not a note.
        Forbidden: inside a protected folder. Ambiguous: several notes match.
        NotFound: no note by that path or name in the snapshot (with close names).
        TooLarge: a note whose structure is not served (unless `structure` is false).
    """
    resolution = resolve_indexed(reader, view, raw, tool)
    found = view.live.lookup(resolution.path)
    if found is None:  # the resolver only answers live notes of this snapshot
        raise NotFound(f"'{display(resolution.path)}' is not an indexed note")
    seg, f = found
    if structure and f.too_large:
        raise TooLarge(
            f"'{display(f.path)}' is over {MAX_NOTE_CHARS_FOR_STRUCTURE:,} characters; its structure is not "
            "indexed. Read it in ranges with vault_read"
        )
    return NoteRow(
        path=f.path,
        folder=f.folder,
        title=f.title,
        facets_json=f.facets_json,
        segment_id=int(seg),
        headings=f.headings,
        resolution=resolution,
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


def next_read(note: NoteRow, heads: list[HeadingRow]) -> WarningItem:
    """NEXT_READ: the read that follows an outline (a section by its id), for the warnings
    channel beside a raw contract (its body has no room for it: seeds 001/004)."""
    where = f"path='{display(note.path)}'"
    if not heads:
        return WarningItem(
            code="NEXT_READ", message=f"no headings; read the note with vault_read({where}, full=true)"
        )
    first = heads[0]
    return WarningItem(
        code="NEXT_READ",
        message=f"read one section with vault_read({where}, section_id='{first.id}'), "
        "any id above; heading='text' works too",
    )


def outcome(
    view: SnapshotView, note: NoteRow, data: object, hint: WarningItem | None = None, truncated: bool = False
) -> Outcome:  # type: ignore[type-arg]
    """A per-note contract's outcome: freshness, how the note was named, capped headings, the next read."""
    warnings = [*view.warnings(), *note.warnings(), *heading_warnings(truncated), *([hint] if hint else [])]
    return Outcome(data=data, warnings=warnings, freshness=view.freshness)


@dataclass
class PinnedNote:
    """One note of a pinned snapshot, as every per-note contract starts: the view, the note,
    its first headings and whether there are more."""

    view: SnapshotView
    note: NoteRow
    heads: list[HeadingRow] = field(default_factory=list)
    truncated: bool = False

    def outcome(self, data: object, *, next_read_hint: bool = True) -> Outcome:  # type: ignore[type-arg]
        """The contract's outcome (see `outcome`), with the next read when asked."""
        hint = next_read(self.note, self.heads) if next_read_hint else None
        return outcome(self.view, self.note, data, hint, self.truncated)


@contextmanager
def pinned_note(
    reader: SnapshotReader, raw: object, tool: str, *, headings: bool = True, structure: bool = True
) -> Iterator[PinnedNote]:
    """The per-note prologue: check the caller's text, pin a snapshot, resolve the note in it
    and (with `headings`) read its headings; the snapshot stays pinned inside the block.
    `structure`: as `resolve_note` (false: a note too large for its structure is served too).

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    check_note_path(reader.vault, raw)
    with reader.acquire() as view:
        note = resolve_note(reader, view, raw, tool, structure=structure)
        heads, truncated = note_headings(view.con, note) if headings else ([], False)
        yield PinnedNote(view, note, heads, truncated)


def get_note_outline(reader: SnapshotReader, path: object) -> Outcome[NoteOutline]:
    """NoteOutline of one note (knowtation.note_outline/v1), read from the snapshot.

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    with pinned_note(reader, path, "get-note-outline") as pinned:
        data = NoteOutline(
            path=pinned.note.path,
            title=pinned.note.title,
            headings=[OutlineHeading(level=h.level, text=h.text, id=h.id) for h in pinned.heads],
            truncated=pinned.truncated,
        )
        return pinned.outcome(data)


def get_document_tree(reader: SnapshotReader, path: object) -> Outcome[DocumentTree]:
    """DocumentTree of one note (knowtation.document_tree/v0): headings nested by level.

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    with pinned_note(reader, path, "get-document-tree") as pinned:
        root = DocRoot(children=[])
        nodes = [DocNode(id=h.id, level=h.level, text=h.text, children=[]) for h in pinned.heads]
        for idx, parent in enumerate(parents(pinned.heads)):
            (root.children if parent is None else nodes[parent].children).append(nodes[idx])
        data = DocumentTree(
            path=pinned.note.path, title=pinned.note.title, root=root, truncated=pinned.truncated
        )
        return pinned.outcome(data)
