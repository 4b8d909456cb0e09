"""vault_update_task: change a task's status, dates or priority in its own notation.

The task is addressed by its note and 1-based line (`Projects/Garden.md` line 12, or
`Projects/Garden.md:12`), the numbering of `vault_read` and `vault_tasks`. The change goes
through the write pipeline as a `vault_edit` does (policy, lock, atomic compare-and-swap,
event appended, conversation record for undo, `wait_for_index`), so:

- `expected_sha256` (the note's) and `expected_line` (the task line's own text) are checked
  against the bytes the write replaces: a note saved meanwhile, or a line that moved or
  changed, is `CONFLICT` and nothing is written (the message says where that text is now);
- the line must be a task as the index reads it (`task_locate`): a checkbox list item
  outside frontmatter, comments and code;
- `daily/` notes are append-only (seed 002): changing a line there is `FORBIDDEN`;
- `dry_run` answers with the diff and writes nothing.

What changes on the line is `task_change`'s (the Tasks plugin's rules), with the plugin's
settings read from the vault as they are now (`task_write_settings`) and `today` from the
caller's clock.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass

from vault_agent.contracts import Outcome
from vault_agent.errors import Conflict, InvalidParameter
from vault_agent.files.atomic import sha256_hex
from vault_agent.files.diff import unified
from vault_agent.files.edit import split_lines
from vault_agent.files.models import FilesContext, TaskLineText, UpdateTaskResult, WriteOptions
from vault_agent.files.task_change import MOVED_DATES, Planned, TaskEdit, plan_change
from vault_agent.files.task_line_edit import LineEditError
from vault_agent.files.task_locate import place_of
from vault_agent.files.task_write_settings import read_write_settings
from vault_agent.files.write_path import edit_text
from vault_agent.paths import display, normalize_rel_path
from vault_agent.task_dates import parse_date
from vault_agent.task_syntax import PRIORITY_NAMES, is_valid_date, parse_task_line

log = logging.getLogger("vault_agent.files")

TOOL = "vault_update_task"
MAX_STATUS_CHARS = 64
MAX_EXPECTED_LINE_CHARS = 20_000
CLEAR = "none"  # a date or priority given as this is removed
_PATH_LINE_RE = re.compile(r"^(.+):([0-9]{1,9})$")
_BOM = "\ufeff"


@dataclass(frozen=True)
class TaskUpdate:
    """One call's parameters (see the module doc); dates are `YYYY-MM-DD`, a date phrase
    (`tomorrow`, `in 3 days`) or `none`."""

    path: str
    line: int | None = None
    status: str | None = None
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    priority: str | None = None
    expected_line: str | None = None
    expected_sha256: str | None = None
    dry_run: bool = False
    wait_for_index: bool = False


def _address(path: str, line: int | None) -> tuple[str, int]:
    """(path, line) from `path` + `line`, or from `PATH:LINE` when `line` is absent."""
    if line is None:
        m = _PATH_LINE_RE.match(path)
        if m is None:
            raise InvalidParameter.about(
                "line", "is required (or give the path as PATH:LINE, e.g. notes/a.md:12)"
            )
        path, line = m.group(1), int(m.group(2))
    if line < 1:
        raise InvalidParameter.about("line", "must be an integer of at least 1")
    return path, line


def _edit_of(request: TaskUpdate, today: dt.date) -> TaskEdit:
    """The change asked for, validated; a date phrase (`tomorrow`, `in 3 days`, `next
    friday`: the Tasks plugin's, task_dates.py) is written as the date it names from `today`.

    Raises:
        InvalidParameter: a date that is neither a `YYYY-MM-DD` calendar date nor a date
            phrase, an unknown priority, or no change at all.
    """
    dates: list[tuple[str, str | None]] = []
    for kind in MOVED_DATES:
        value: str | None = getattr(request, kind)
        if value is None:
            continue
        day = parse_date(value, today)
        if value.strip().lower() == CLEAR:
            dates.append((kind, None))
        elif is_valid_date(value.strip()):
            dates.append((kind, value.strip()))
        elif day is not None:
            dates.append((kind, day.isoformat()))
        else:
            raise InvalidParameter.about(
                kind,
                "must be a date (YYYY-MM-DD, today, tomorrow, in 3 days, next friday), or 'none' to remove it",
            )
    priority = request.priority.strip().lower() if request.priority is not None else None
    if priority is not None and priority not in PRIORITY_NAMES:
        raise InvalidParameter("parameter 'priority' must be one of: " + ", ".join(PRIORITY_NAMES))
    status = request.status
    if status is not None and (status == "" or len(status) > MAX_STATUS_CHARS):
        raise InvalidParameter.about("status", "must be a status symbol, type or name")
    if status is None and priority is None and not dates:
        raise InvalidParameter("give at least one change: status, due, scheduled, start or priority")
    return TaskEdit(status=status, dates=tuple(dates), priority=priority)


def _expected(text: str | None) -> str | None:
    """The expected line without a line end a caller may have copied with it."""
    if text is None:
        return None
    if len(text) > MAX_EXPECTED_LINE_CHARS:
        raise InvalidParameter.about(
            "expected_line", f"must be at most {MAX_EXPECTED_LINE_CHARS:,} characters"
        )
    return text.removesuffix("\n").removesuffix("\r").removeprefix(_BOM)


def _cut_end(line: str) -> tuple[str, str]:
    """(text, line end) of one line of `split_lines`."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""


def _moved_message(rel: str, n: int, texts: list[str], expected: str) -> str:
    where = [i + 1 for i, text in enumerate(texts) if text.removeprefix(_BOM) == expected]
    now = f"; that text is now line {where[0]}" if len(where) == 1 else ""
    return (
        f"line {n} of '{display(rel)}' no longer holds the expected task text (the note changed){now}; "
        "nothing was written. Read the note again (vault_read, or vault_tasks for its tasks) and retry "
        "with the task's current line and text"
    )


@dataclass
class _Planned:
    """What the edit planned (set when the pipeline ran it)."""

    value: Planned | None = None


def _check_place(rel: str, n: int, texts: list[str], task_text: str) -> None:
    if parse_task_line(task_text) is None:
        raise InvalidParameter(
            f"line {n} of '{display(rel)}' is no task (a checkbox list item such as '- [ ] …'); "
            "vault_tasks lists a note's tasks with their lines"
        )
    place = place_of([t.removeprefix(_BOM) if i == 0 else t for i, t in enumerate(texts)], n)
    if place != "item":
        where = "in the frontmatter" if place == "frontmatter" else "inside code, a comment or a paragraph"
        raise InvalidParameter(f"line {n} of '{display(rel)}' is {where}: it is no task")


def update_task(ctx: FilesContext, request: TaskUpdate, today: dt.date) -> Outcome[UpdateTaskResult]:
    """Change one task as `request` says (module doc) and answer with the diff.

    Raises:
        InvalidParameter: bad parameters, a line that is no task, a change the line cannot
            take safely, an unknown status, a recurrence rule that cannot be used.
        Conflict: the note or the line changed (expected_sha256, expected_line).
        Forbidden: protected, `.system/`, `daily/`. NotFound: no such note.
    """
    raw_path, n = _address(request.path, request.line)
    rel = normalize_rel_path(raw_path)
    edit = _edit_of(request, today)
    expected = _expected(request.expected_line)
    settings = read_write_settings(ctx.vault)
    seen = _Planned()

    def apply(text: str, rel: str) -> tuple[str, int]:
        lines = split_lines(text)
        texts = [_cut_end(line)[0] for line in lines]
        if n > len(lines):
            if expected is not None:
                raise Conflict(_moved_message(rel, n, texts, expected))
            raise InvalidParameter.about(
                "line", f"must be 1 to {len(lines)} ('{display(rel)}' has {len(lines)} lines)"
            )
        body, end = _cut_end(lines[n - 1])
        bom = _BOM if n == 1 and body.startswith(_BOM) else ""
        body = body[len(bom) :]
        if expected is not None and body != expected:
            raise Conflict(_moved_message(rel, n, texts, expected))
        _check_place(rel, n, texts, body)
        try:
            planned = plan_change(body, edit, settings, today)
        except LineEditError:
            raise InvalidParameter(
                f"line {n} of '{display(rel)}' cannot take this change without other text on it reading "
                "differently; change it with vault_edit"
            ) from None
        seen.value = planned
        eol = end or ("\r\n" if "\r\n" in text else "\n")
        segment = [
            (bom if i == 0 else "") + out + (end if i == len(planned.lines) - 1 else eol)
            for i, out in enumerate(planned.lines)
        ]
        return "".join(lines[: n - 1] + segment + lines[n:]), 1

    options = WriteOptions(request.dry_run, request.expected_sha256, request.wait_for_index)
    applied, _ = edit_text(ctx, TOOL, rel, "edit", apply, options)
    planned = seen.value
    assert planned is not None and applied.before is not None  # the edit ran on the note (or raised)
    diff, truncated = unified(applied.rel, applied.before, applied.after)
    data = UpdateTaskResult(
        path=applied.rel,
        line=None if planned.task_at is None else n + planned.task_at,
        text=None if planned.task_at is None else planned.lines[planned.task_at],
        status=planned.status.symbol,
        status_type=planned.status.type,
        next_occurrence=None
        if planned.next_at is None
        else TaskLineText(line=n + planned.next_at, text=planned.lines[planned.next_at]),
        removed=planned.task_at is None,
        changed=applied.changed,
        dry_run=request.dry_run,
        sha256_before=sha256_hex(applied.before),
        sha256=applied.sha256,
        diff=diff,
        diff_truncated=truncated,
        **applied.info.model_dump(),
    )
    return Outcome(data=data, warnings=applied.warnings + planned.warnings)
