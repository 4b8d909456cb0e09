"""Files as numbered lines, and paging through them under a character budget.

Line model (the same as the indexer's, so snapshot line spans match): UTF-8 with bad bytes
as U+FFFD, a leading BOM is not content, and LF, CRLF and a lone CR each end a line; a
final line end does not start another line. Pages keep every character, line ends
included, so concatenating the pages of a file gives back its decoded text exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from vault_agent.contracts import WarningItem
from vault_agent.errors import TooLarge
from vault_agent.names import Resolution
from vault_agent.paths import Resolved, Vault, display
from vault_agent.query.limits import MAX_FILE_BYTES
from vault_agent.query.note_names import resolve_on_disk
from vault_agent.query.snapshot import SnapshotReader

BOM = "\ufeff"
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


@dataclass(frozen=True)
class TextFile:
    path: str  # canonical vault-relative path
    lines: list[str]  # with their line ends
    resolution: Resolution | None = None  # how the caller's text named the file
    raw: bytes = b""  # the bytes read (a section read compares them with the snapshot's)

    @property
    def total_lines(self) -> int:
        return len(self.lines)

    def warnings(self) -> list[WarningItem]:
        """`NAME_RESOLVED` when the caller named the file by anything but its exact path."""
        warning = self.resolution.warning() if self.resolution is not None else None
        return [warning] if warning else []


def decode(raw: bytes) -> str:
    """Bytes → text: UTF-8, U+FFFD for undecodable bytes, leading BOM dropped."""
    text = raw.decode("utf-8", errors="replace")
    return text[1:] if text.startswith(BOM) else text


def split_lines(text: str) -> list[str]:
    """Lines with their line ends (LF, CRLF, lone CR)."""
    return _LINE_RE.findall(text)


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def resolve_file(
    vault: Vault, raw_path: object, reader: SnapshotReader | None = None, tool: str = "read"
) -> tuple[Resolved, Resolution]:
    """Caller text → an existing regular file under the vault, by path or by note name
    (names.resolve_name: exact, case, extension, wikilink, basename, title, alias; the names
    come from `reader`'s snapshot when it has one).

    Raises:
        InvalidPath: malformed path, a symlink, or a folder. Forbidden: protected folder.
        Ambiguous: several notes match. NotFound: no such file (with close names).
    """
    return resolve_on_disk(vault, reader, raw_path, tool)


def load_text(
    vault: Vault, raw_path: object, reader: SnapshotReader | None = None, tool: str = "read"
) -> TextFile:
    """Read a vault file as numbered lines (see resolve_file for how it is named).

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound: see resolve_file. TooLarge: over 32 MiB.
    """
    resolved, resolution = resolve_file(vault, raw_path, reader, tool)
    raw = read_capped(vault, resolved)
    return TextFile(path=resolved.rel, lines=split_lines(decode(raw)), resolution=resolution, raw=raw)


def read_capped(vault: Vault, resolved: Resolved) -> bytes:
    """The bytes of a file the read tools serve; the one refusal of files over the read cap.

    Raises:
        TooLarge: over MAX_FILE_BYTES (32 MiB), whichever tool asked.
    """
    raw = vault.read_bytes(resolved, MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise TooLarge(
            f"'{display(resolved.rel)}' is over 32 MiB, more than vault-agent reads with any tool; "
            "open it in an editor, or split it into smaller notes"
        )
    return raw


@dataclass(frozen=True)
class Page:
    """A slice of a file: whole lines, except that a line longer than the budget is cut."""

    text: str
    start_line: int  # first line returned (1-based)
    end_line: int  # last line returned, fully or partly (start_line - 1 when empty)
    next_line: int | None  # first line not (fully) returned, None when the stop was `end`
    next_char: int  # offset inside next_line where the rest starts (0 = the line start)
    cut_by_budget: bool


PageStop = Literal["hard_limit", "max_chars", "range_end", "none"]


def page_stop(pg: Page, last: int, total: int, capped: bool) -> tuple[PageStop, int | None, int | None]:
    """Why a page of lines up to `last` stopped, and where the next page starts.

    Returns (reason, next start line or None at the end, char offset inside it or None).
    Shared by vault_read and vault_scan, which name `range_end` after their own cursor.
    """
    if pg.cut_by_budget:
        return ("hard_limit" if capped else "max_chars"), pg.next_line, pg.next_char or None
    if last < total:
        return "range_end", last + 1, None
    return "none", None, None


def page(lines: list[str], start_line: int, start_char: int, end_line: int, max_chars: int) -> Page:
    """Take lines start_line..end_line (1-based, inclusive) until max_chars is reached.

    Whole lines are returned while they fit; when the first line alone does not fit, its
    first max_chars characters are returned and the page continues inside it.
    """
    parts: list[str] = []
    used = 0
    line = start_line
    offset = start_char
    while line <= end_line:
        piece = lines[line - 1][offset:]
        if used + len(piece) <= max_chars:
            parts.append(piece)
            used += len(piece)
            line += 1
            offset = 0
            continue
        if not parts:  # a single over-long line: cut inside it
            parts.append(piece[:max_chars])
            text = "".join(parts)
            return Page(text, start_line, line, line, offset + max_chars, True)
        return Page("".join(parts), start_line, line - 1, line, 0, True)
    return Page("".join(parts), start_line, end_line, None, 0, False)


def number_lines(text: str, first_line: int) -> str:
    """Prefix each line with its number and a tab (cat -n style), for seed 003 reads."""
    out = []
    for i, line in enumerate(split_lines(text)):
        out.append(f"{first_line + i}\t{line}")
    return "".join(out)
