"""`vault_ls` and `vault_read` (seed 002, with seed 003's glob, mtime sort and line numbers).

Both read the current files through `Vault` (never the snapshot): no index is needed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from pydantic import PrivateAttr

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import IndexNotFound, InvalidParameter, InvalidPath, out_of_range
from vault_agent.paging import decode_cursor, encode_cursor, fit, json_chars
from vault_agent.paths import DIR_FLAGS, Vault, display, has_surrogates, normalize_rel_path
from vault_agent.query.globmatch import compile_glob
from vault_agent.query.limits import (
    LS_DEFAULT_LIMIT,
    LS_MAX_CHARS,
    LS_MAX_ENTRIES,
    READ_DEFAULT_MAX_CHARS,
    READ_HARD_MAX_CHARS,
)
from vault_agent.query.lines import load_text, number_lines, page, page_stop
from vault_agent.query.section_read import SectionSpan, choose_address, find_section
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.wire import LineRange, Wire, iso_seconds, omit_none
from vault_agent.text import nfc

# ================================================================== vault_ls


class LsEntry(Wire):
    path: str
    type: Literal["file", "dir"]
    size_bytes: int | None
    mtime: str  # last modification, ISO 8601 UTC to the second (seed 003's listing by mtime)


class LsData(Wire):
    entries: list[LsEntry]
    # Where the next page starts (pass it as `cursor`); absent on the last page.
    next_cursor: str | None = omit_none()


@dataclass(frozen=True)
class TreeEntry:
    rel: str
    is_dir: bool
    size: int
    mtime_ns: int


def iter_tree(vault: Vault, dir_fd: int, rel_dir: str, recursive: bool) -> Iterator[TreeEntry]:
    """Entries under an open folder: no symlinks, special files, excluded or protected names.

    Takes ownership of dir_fd. Folders are opened relative to their parent without
    following links, so a folder swapped for a link is skipped, never entered.
    """
    try:
        with os.scandir(dir_fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            name = entry.name
            if has_surrogates(name):
                continue
            rel = f"{rel_dir}/{nfc(name)}" if rel_dir else nfc(name)
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if not is_dir and not stat.S_ISREG(st.st_mode):
                continue  # symlinks, FIFOs, sockets, devices
            if vault.rules.hidden(rel, is_dir):
                continue
            yield TreeEntry(rel, is_dir, 0 if is_dir else st.st_size, st.st_mtime_ns)
            if is_dir and recursive:
                try:
                    sub = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EACCES, errno.ENOENT):
                        continue
                    raise
                yield from iter_tree(vault, sub, rel, True)
    finally:
        os.close(dir_fd)


def vault_ls(
    vault: Vault,
    relative_dir: str | None = None,
    glob: str | None = None,
    sort: Literal["name", "mtime"] | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Outcome[LsData]:
    """List a folder: direct children, or with `glob` every match below it (recursive).

    Order: by path (code points), or with sort="mtime" newest first (ties by path). One
    page: at most `limit` entries (default 100, max 1,000) and LS_MAX_CHARS characters,
    then `next_cursor`.

    Raises:
        InvalidPath: malformed path or not a folder. Forbidden: protected folder.
        NotFound: no such folder. InvalidParameter: bad glob, sort, limit or cursor.
    """
    if sort not in (None, "name", "mtime"):
        raise InvalidParameter.about("sort", "must be one of: name, mtime")
    want = LS_DEFAULT_LIMIT if limit is None else limit
    if not 1 <= want <= LS_MAX_ENTRIES:
        raise out_of_range("limit", 1, LS_MAX_ENTRIES)
    by_mtime = sort == "mtime"
    after = None if cursor is None else decode_cursor(cursor, (int, str) if by_mtime else (str,))
    matcher = compile_glob(glob)
    rel = normalize_rel_path(relative_dir or "", allow_root=True)
    vault.check_not_protected(rel)
    resolved = vault.resolve(rel)
    if not resolved.is_dir:
        raise InvalidPath(f"'{display(resolved.rel)}' is a file; read it with vault_read")
    # Every component is opened relative to its parent with O_NOFOLLOW.
    fd = vault.open_dir(resolved.raw_parts, resolved.rel)
    found = [
        e
        for e in iter_tree(vault, fd, resolved.rel, recursive=matcher is not None)
        if not matcher or matcher(e.rel)
    ]

    def key(e: TreeEntry) -> tuple[int, str] | tuple[str]:
        return (-e.mtime_ns, e.rel) if by_mtime else (e.rel,)

    found.sort(key=key)
    if after is not None:
        found = [e for e in found if key(e) > after]
    entries = [
        LsEntry(
            path=e.rel,
            type="dir" if e.is_dir else "file",
            size_bytes=None if e.is_dir else e.size,
            mtime=iso_seconds(e.mtime_ns),
        )
        for e in found[:want]
    ]
    shown = fit(entries, LS_MAX_CHARS, lambda entry: json_chars(entry.model_dump(mode="json")))
    if shown == len(found):
        return Outcome(data=LsData(entries=entries))
    warning = WarningItem(
        code="LS_TRUNCATED",
        message=f"{shown} entries listed, {len(found) - shown} more; pass next_cursor as cursor for the "
        "next page, or narrow with relative_dir or glob",
    )
    page = LsData(entries=entries[:shown], next_cursor=encode_cursor(*key(found[shown - 1])))
    return Outcome(data=page, warnings=[warning])


# ================================================================== vault_read

TruncatedReason = Literal["max_chars", "range_end", "hard_limit", "none"]


class NextOffset(Wire):
    start_line: int | None
    start_char: int | None = omit_none()  # only when the next page starts inside a line


class ReadData(Wire):
    text: str
    truncated: bool
    returned_chars: int
    applied_range: LineRange
    next_offset: NextOffset
    truncated_reason: TruncatedReason
    _path_read: str = PrivateAttr(default="")  # the file read, for seed 003's read_file; not on the wire

    @property
    def path_read(self) -> str:
        """The vault-relative path of the file read (the caller may have typed a name)."""
        return self._path_read

    def set_path_read(self, path: str) -> None:
        self._path_read = path


def effective_max_chars(max_chars: int | None) -> tuple[int, bool]:
    """(budget, capped by the hard limit) for a caller's max_chars.

    Raises:
        InvalidParameter: max_chars below 1.
    """
    if max_chars is None:
        return READ_DEFAULT_MAX_CHARS, False
    if max_chars < 1:
        raise out_of_range("limits.max_chars", 1, None)
    if max_chars > READ_HARD_MAX_CHARS:
        return READ_HARD_MAX_CHARS, True
    return max_chars, False


def check_line(name: str, value: int | None) -> None:
    """Raises: InvalidParameter when a line number is below 1."""
    if value is not None and value < 1:
        raise out_of_range(name, 1, None)


@dataclass(frozen=True)
class ReadRequest:
    """vault_read's parameters: the note (as people name it), what to read (`full` to the end,
    a range given by `has_range` with its lines, a section by id or heading), the budget
    (`max_chars`; `max_lines` a caller's cap), numbered lines, and the tool named in messages."""

    path: object
    full: bool | None = None
    has_range: bool = False
    start_line: int | None = None
    end_line: int | None = None
    start_char: int | None = None
    max_chars: int | None = None
    line_numbers: bool = False
    section_id: str | None = None
    heading: str | None = None
    max_lines: int | None = None
    tool: str = "read"


def vault_read(vault: Vault, request: ReadRequest, reader: SnapshotReader | None = None) -> Outcome[ReadData]:
    """Read a file's lines start_line..end_line, or one section, under a character budget.

    full=false (the default) requires a range, a section_id or a heading (or a path
    `[[Note#Heading]]`); full=true reads to the end of the file (still bounded by max_chars,
    default 20,000, hard limit 100,000). `truncated` is true when text stops before the end
    of the file; next_offset.start_line says where to go on. The note is found first (by
    path or name, names.resolve_name), so a missing note is NOT_FOUND whatever else is wrong.
    `max_lines` caps the lines of one call and `tool` names the caller in messages (seed
    003's read_file: 2,000 lines); `data.path_read` is the file read (not on the wire).

    Raises:
        InvalidParameter: no range/section with full=false, several of them, bad line numbers.
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge: see lines.load_text and
            section_read.find_section.
    """
    start_line, end_line, has_range = request.start_line, request.end_line, request.has_range
    doc = load_text(vault, request.path, reader, request.tool)
    address = choose_address(
        has_range,
        request.section_id,
        request.heading,
        doc.resolution.heading if doc.resolution else (),
        "range",
    )
    if not request.full and not has_range and address is None:
        raise InvalidParameter.naming(
            "give {range} (the lines to read), {section_id} or {heading} (one section), or {full} to read to the end"
        )
    check_line("range.start_line", start_line)
    check_line("range.end_line", end_line)
    if request.start_char is not None and request.start_char < 0:
        raise out_of_range("range.start_char", 0, None)
    first = start_line or 1
    if end_line is not None and end_line < first:
        raise InvalidParameter.naming("{range.end_line:lead} must not be before {range.start_line}")
    budget, capped = effective_max_chars(request.max_chars)
    total = doc.total_lines
    warnings: list[WarningItem] = doc.warnings()
    section: SectionSpan | None = None
    if address is not None:
        section, changed = find_section(require_reader(reader), doc.path, address, doc.raw)
        warnings += changed
        first, end_line = section.start_line, section.last_line(total)
    last = total if end_line is None else min(end_line, total)
    if request.max_lines is not None:
        last = min(last, first + request.max_lines - 1)
    if first > total:
        if total > 0:
            warnings.append(
                WarningItem(
                    code="RANGE_PAST_END", message=f"the file has {total} lines; start_line is past the end"
                )
            )
        data = ReadData(
            text="",
            truncated=False,
            returned_chars=0,
            applied_range=LineRange(start_line=first, end_line=first - 1),
            next_offset=NextOffset(start_line=None),
            truncated_reason="none",
        )
        data.set_path_read(doc.path)
        return Outcome(data=data, warnings=warnings)
    pg = page(doc.lines, first, request.start_char or 0, last, budget)
    reason, next_line, next_char = page_stop(pg, last, total, capped)
    nxt = NextOffset(start_line=next_line, start_char=next_char)
    text = number_lines(pg.text, first) if request.line_numbers else pg.text
    data = ReadData(
        text=text,
        truncated=reason != "none",
        returned_chars=len(pg.text),
        applied_range=LineRange(start_line=first, end_line=pg.end_line),
        next_offset=nxt,
        truncated_reason=reason,
    )
    if section is not None and pg.next_line is not None and pg.next_line <= last:
        warnings.append(section_continues(section, pg.next_line, pg.next_char, last))
    data.set_path_read(doc.path)
    return Outcome(data=data, warnings=warnings)


def section_continues(section: SectionSpan, line: int, char: int, last: int) -> WarningItem:
    """SECTION_CONTINUES: where the rest of a section cut by the budget is, as a range to read."""
    at = f", start_char: {char}" if char else ""
    return WarningItem(
        code="SECTION_CONTINUES",
        message=f"section {section.id} runs to line {last}; read the rest with "
        f"range {{start_line: {line}{at}, end_line: {last}}}",
    )


def require_reader(reader: SnapshotReader | None) -> SnapshotReader:
    """The snapshot reader a section read needs (headings live in the index).

    Raises:
        IndexNotFound: the caller has no index to read sections from.
    """
    if reader is None:
        raise IndexNotFound("sections are addressed through the index; run 'vault-agent index'")
    return reader
