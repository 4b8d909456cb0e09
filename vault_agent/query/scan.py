"""`vault_scan` (seed 002): read a file chunk by chunk from a cursor, with next actions.

The first scan starts at line 1; later passes start at the first uncovered line that
`vault_coverage` or `artifact_audit` propose. `applied_range` holds the lines whose end this
page returns (what the caller may cite): a line cut by the character budget belongs to the
page that finishes it. next_actions (first = recommended):
- more lines after this chunk → vault_scan {path, cursor} (0.9), vault_coverage {path} (0.3)
- end of file → vault_coverage {path} (0.9): the caller adds the ranges it cited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vault_agent.contracts import Outcome
from vault_agent.errors import InvalidParameter, out_of_range
from vault_agent.paths import Vault
from vault_agent.query.files import check_line, effective_max_chars, require_reader
from vault_agent.query.limits import SCAN_DEFAULT_CHUNK_LINES, SCAN_MAX_CHUNK_LINES
from vault_agent.query.lines import load_text, page, page_stop
from vault_agent.query.section_read import choose_address, find_section
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.wire import LineRange, NextAction, Wire, action, omit_none

ScanReason = Literal["max_chars", "chunk_end", "hard_limit", "none"]


class Cursor(Wire):
    start_line: int | None
    start_char: int | None = omit_none()  # only when the next chunk starts inside a line


class ScanData(Wire):
    text: str
    applied_range: LineRange
    next_cursor: Cursor
    eof: bool
    truncated: bool
    truncated_reason: ScanReason
    next_actions: list[NextAction]


@dataclass(frozen=True)
class ScanRequest:
    """vault_scan's parameters: the note (as people name it), the cursor (`start_line`,
    `start_char`), the chunk's lines and character budget, and a section to scan alone."""

    path: object
    start_line: int | None = None
    start_char: int | None = None
    chunk_lines: int | None = None
    max_chars: int | None = None
    section_id: str | None = None
    heading: str | None = None


def vault_scan(vault: Vault, request: ScanRequest, reader: SnapshotReader | None = None) -> Outcome[ScanData]:
    """One chunk of `chunk_lines` lines (default 200, 1..1000) from cursor.start_line (default 1).

    `truncated` is true exactly when `truncated_reason` is not "none" (as in vault_read):
    the chunk stopped before the end of the file, at its line count (`chunk_end`) or at the
    character budget (limits.max_chars, default 20,000, hard limit 100,000); `eof` when the
    chunk reaches the end of the file. With `section_id` or `heading` (or a path
    `[[Note#Heading]]`) the scan covers that section only: it starts at the heading, the
    cursor moves inside it, and `eof` is the end of the section.

    Raises:
        InvalidParameter: chunk_lines outside 1..1000, bad cursor or max_chars, two addresses.
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge: see lines.load_text and
            section_read.find_section.
    """
    start_line, start_char = request.start_line, request.start_char
    size = SCAN_DEFAULT_CHUNK_LINES if request.chunk_lines is None else request.chunk_lines
    if not 1 <= size <= SCAN_MAX_CHUNK_LINES:
        raise out_of_range("chunk_lines", 1, SCAN_MAX_CHUNK_LINES)
    check_line("cursor.start_line", start_line)
    if start_char is not None and start_char < 0:
        raise out_of_range("cursor.start_char", 0, None)
    budget, capped = effective_max_chars(request.max_chars)
    doc = load_text(vault, request.path, reader, "scan")
    link = doc.resolution.heading if doc.resolution else ()
    address = choose_address(False, request.section_id, request.heading, link, None)
    warnings = doc.warnings()
    total = doc.total_lines
    first = start_line or 1
    base: dict[str, object] = {"path": doc.path}
    if address is not None:
        section, changed = find_section(require_reader(reader), doc.path, address, doc.raw)
        warnings += changed
        base["section_id"] = section.id
        if start_line is not None and start_line < section.start_line:
            raise InvalidParameter.about(
                "cursor.start_line",
                f"must lie in the section (lines {section.start_line}-{section.last_line(total)})",
            )
        first = start_line or section.start_line
        total = section.last_line(total)  # the section's end is this scan's end
    if first > total:
        data = ScanData(
            text="",
            applied_range=LineRange(start_line=first, end_line=first - 1),
            next_cursor=Cursor(start_line=None),
            eof=True,
            truncated=False,
            truncated_reason="none",
            next_actions=[action("vault_coverage", 0.9, {"path": doc.path})],
        )
        return Outcome(data=data, warnings=warnings)
    last = min(total, first + size - 1)
    pg = page(doc.lines, first, start_char or 0, last, budget)
    stop, next_line, next_char = page_stop(pg, last, total, capped)
    reason: ScanReason = "chunk_end" if stop == "range_end" else stop
    cursor = Cursor(start_line=next_line, start_char=next_char)
    eof = cursor.start_line is None
    if eof:
        actions = [action("vault_coverage", 0.9, {"path": doc.path})]
    else:
        nxt: dict[str, object] = {"start_line": cursor.start_line}
        if cursor.start_char:
            nxt["start_char"] = cursor.start_char
        params: dict[str, object] = {**base, "cursor": nxt}
        if size != SCAN_DEFAULT_CHUNK_LINES:
            params["chunk_lines"] = size
        actions = [action("vault_scan", 0.9, params), action("vault_coverage", 0.3, {"path": doc.path})]
    # Coverage counts whole lines: a line cut by the budget is not applied by this page but
    # by the page that reaches its end (following next_cursor.start_char), so two pages that
    # read a third of a long line never cite it as read.
    covered_end = pg.end_line - 1 if pg.cut_by_budget and pg.next_char else pg.end_line
    data = ScanData(
        text=pg.text,
        applied_range=LineRange(start_line=first, end_line=covered_end),
        next_cursor=cursor,
        eof=eof,
        truncated=reason != "none",
        truncated_reason=reason,
        next_actions=actions,
    )
    return Outcome(data=data, warnings=warnings)
