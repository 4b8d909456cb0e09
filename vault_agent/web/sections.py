"""The page's note view reads one section at a time, never a whole huge note.

`section_span` finds a section's lines in the pinned snapshot: from its heading to the line
before the next heading of the same or a higher level (or the end of the note); without a
heading, the text before the first one. A search hit opens the section that holds its
first line. `read_section` reads those lines through the `read` operation (vault_read)
under `SECTION_CHARS`, with a place to go on from when the section is longer.

When `vault_read` takes `section_id` (SPEC "Addresses and names"), `read_section` is the
one function to switch: pass `section_id` instead of the computed range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vault_agent.api.invoke import invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import explore
from vault_agent.contracts import Outcome
from vault_agent.errors import NotFound
from vault_agent.query.outline import resolve_note
from vault_agent.query.snapshot import SnapshotView

SECTION_CHARS = 20_000  # one page of a section; the rest is read on request
LINES_PER_PAGE = 400  # a note too large for an outline is read in pages of lines


@dataclass(frozen=True)
class SectionSpan:
    path: str
    heading_id: str | None  # None: the text before the first heading
    start_line: int
    end_line: int


def section_span(
    ctx: AppContext, path: str, heading_id: str | None = None, line: int | None = None
) -> SectionSpan:
    """The lines of the section `heading_id`, or of the one holding `line`, of a note.

    Raises:
        InvalidPath, Forbidden, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    reader = ctx.reader
    with reader.acquire() as view:
        note = resolve_note(reader, view, path, "web")
        table = SnapshotView.segment_table("headings", note.segment_id)
        row = view.con.execute("SELECT line_count FROM notes WHERE path = ?", [note.path]).fetchone()
        last = max(1, int(row[0] or 1)) if row else 1
        target: tuple[Any, ...] | None = None
        if heading_id is not None:
            target = view.con.execute(
                f"SELECT ordinal, level, line, id FROM {table} WHERE path = ? AND id = ?",
                [note.path, heading_id],
            ).fetchone()
            if target is None:
                raise NotFound("this note has no heading with that id any more; open its outline again")
        elif line is not None:
            target = view.con.execute(
                f"SELECT ordinal, level, line, id FROM {table} WHERE path = ? AND line <= ? "
                "ORDER BY line DESC LIMIT 1",
                [note.path, line],
            ).fetchone()
        if target is None:  # the top of the note: the text before its first heading
            target = view.con.execute(
                f"SELECT ordinal, level, line, id FROM {table} WHERE path = ? ORDER BY ordinal LIMIT 1",
                [note.path],
            ).fetchone()
            if target is None:
                return SectionSpan(note.path, None, 1, last)  # no headings: the note is one section
            if int(target[2]) > 1:
                return SectionSpan(note.path, None, 1, int(target[2]) - 1)
        ordinal, level, start, found_id = target
        nxt = view.con.execute(
            f"SELECT min(line) FROM {table} WHERE path = ? AND ordinal > ? AND level <= ?",
            [note.path, ordinal, level],
        ).fetchone()
        end = int(nxt[0]) - 1 if nxt and nxt[0] is not None else last
        return SectionSpan(note.path, str(found_id), int(start), max(int(start), end))


def read_section(
    ctx: AppContext, span: SectionSpan, from_line: int | None = None, from_char: int | None = None
) -> Outcome[Any]:
    """One page (≤ SECTION_CHARS) of the section's text, from `from_line`/`from_char`
    when going on; the `read` operation's answer (ReadData with next_offset).

    Raises:
        InvalidPath, Forbidden, NotFound, TooLarge: see vault_read.
    """
    start = (
        from_line
        if from_line is not None and span.start_line <= from_line <= span.end_line
        else span.start_line
    )
    where: dict[str, Any] = {"start_line": start, "end_line": span.end_line}
    if from_char:
        where["start_char"] = from_char
    raw = {"path": span.path, "range": where, "limits": {"max_chars": SECTION_CHARS}}
    return invoke(explore.READ, ctx, raw)


def read_lines(
    ctx: AppContext, path: str, from_line: int | None = None, from_char: int | None = None
) -> Outcome[Any]:
    """One page of a note too large for an outline, from `from_line` (the read operation).

    Raises:
        InvalidPath, Forbidden, NotFound, TooLarge: see vault_read.
    """
    start = from_line or 1
    where: dict[str, Any] = {"start_line": start, "end_line": start + LINES_PER_PAGE - 1}
    if from_char:
        where["start_char"] = from_char
    return invoke(explore.READ, ctx, {"path": path, "range": where, "limits": {"max_chars": SECTION_CHARS}})
