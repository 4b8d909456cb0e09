"""The page's note view reads one section at a time, never a whole huge note.

`section_span` finds a section's lines in the pinned snapshot: from its heading to the line
before the next heading of the same or a higher level (or the end of the note). A heading
is named by its id (the outline), by its text (a wikilink's `[[Note#Heading]]`), or by a
line it holds (a search hit). Without one, a short note (≤ WHOLE_NOTE_CHARS) is shown
whole, and a longer one from its top: the text before its first heading. `read_section`
reads those lines through the `read` operation (vault_read) under `SECTION_CHARS`, with a
place to go on from when the section is longer.

When `vault_read` takes `section_id` (SPEC "Addresses and names"), `read_section` is the
one function to switch: pass `section_id` instead of the computed range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from vault_agent.api.invoke import invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import explore
from vault_agent.contracts import Outcome
from vault_agent.errors import NotFound
from vault_agent.query.outline import resolve_note
from vault_agent.query.snapshot import SnapshotView
from vault_agent.text import slugify

SECTION_CHARS = 20_000  # one page of a section; the rest is read on request
WHOLE_NOTE_CHARS = SECTION_CHARS  # a note this short opens whole, not at its first section
LINES_PER_PAGE = 400  # a note too large for an outline is read in pages of lines


@dataclass(frozen=True)
class SectionSpan:
    path: str
    heading_id: str | None  # None: the whole note, or the text before its first heading
    start_line: int
    end_line: int
    kind: Literal["whole", "top", "section"] = "section"
    heading: str = ""  # the section's heading text ("" for the whole note or its top)
    short: bool = False  # the whole note fits one page (≤ WHOLE_NOTE_CHARS): shown whole by default


@dataclass(frozen=True)
class SectionPlace:
    """Which section of a note to show: a heading's id, a heading's text, or a line it
    holds (first given wins); none: the whole note when short, else its top."""

    heading_id: str | None = None
    heading: str | None = None
    line: int | None = None


def _heading_by_text(rows: list[tuple[Any, ...]], text: str) -> tuple[Any, ...] | None:
    """The heading a wikilink's `#Heading` names: the same text, else the same text in
    another case, else the same slug (`[[Note#font size]]` opens "Font Size")."""
    wanted = text.split("#")[-1].strip()  # `[[Note#Part#Sub]]`: the last one
    for same in (
        lambda h: h == wanted,
        lambda h: h.casefold() == wanted.casefold(),
        lambda h: slugify(h) == slugify(wanted),
    ):
        found = next((r for r in rows if same(str(r[4]))), None)
        if found is not None:
            return found
    return None


def section_span(ctx: AppContext, path: str, place: SectionPlace) -> SectionSpan:
    """The lines of the section a place names (see SectionPlace), of a note.

    Raises:
        InvalidPath, Forbidden, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    reader = ctx.reader
    with reader.acquire() as view:
        note = resolve_note(reader, view, path, "web")
        table = SnapshotView.segment_table("headings", note.segment_id)
        row = view.con.execute(
            "SELECT line_count, char_count FROM notes WHERE path = ?", [note.path]
        ).fetchone()
        last = max(1, int(row[0] or 1)) if row else 1
        short = (int(row[1] or 0) if row else 0) <= WHOLE_NOTE_CHARS
        columns = f"SELECT ordinal, level, line, id, text FROM {table} WHERE path = ?"
        target: tuple[Any, ...] | None = None
        if place.heading_id is not None:
            target = view.con.execute(f"{columns} AND id = ?", [note.path, place.heading_id]).fetchone()
            if target is None:
                raise NotFound("this note has no heading with that id any more; open its outline again")
        elif place.heading is not None:
            target = _heading_by_text(
                view.con.execute(f"{columns} ORDER BY ordinal", [note.path]).fetchall(), place.heading
            )
        elif place.line is not None:
            target = view.con.execute(
                f"{columns} AND line <= ? ORDER BY line DESC LIMIT 1", [note.path, place.line]
            ).fetchone()
        if target is None:
            if short:  # a short note is shown whole
                return SectionSpan(note.path, None, 1, last, "whole", short=True)
            # The top of a long note: the text before its first heading.
            target = view.con.execute(f"{columns} ORDER BY ordinal LIMIT 1", [note.path]).fetchone()
            if target is None:
                return SectionSpan(note.path, None, 1, last, "whole", short=short)  # no headings
            if int(target[2]) > 1:
                return SectionSpan(note.path, None, 1, int(target[2]) - 1, "top", short=short)
        ordinal, level, start, found_id, text = target
        nxt = view.con.execute(
            f"SELECT min(line) FROM {table} WHERE path = ? AND ordinal > ? AND level <= ?",
            [note.path, ordinal, level],
        ).fetchone()
        end = int(nxt[0]) - 1 if nxt and nxt[0] is not None else last
        return SectionSpan(
            note.path, str(found_id), int(start), max(int(start), end), "section", str(text), short
        )


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
