"""What one `vault_update_task` call does to a task line (pure, no I/O).

First the fields asked for (due, scheduled, start, priority) change in place
(`task_line_edit`), then the status, as the Tasks plugin's `Task.handleNewStatus` does it:

- the same status: nothing more;
- to a DONE status from another type: `✅ today` / `[completion:: today]` (unless the
  plugin's `setDoneDate` is off); to CANCELLED likewise `❌` / `[cancelled:: …]`
  (`setCancelledDate`); staying DONE (or CANCELLED) keeps the date; leaving it removes it;
- a recurring task going to DONE from another type gets its next occurrence: the line as it
  was, with the next recurrence status (`getNextRecurrenceStatusOrCreate`: the done status's
  next, then along the chain to a TODO, else an IN_PROGRESS, else ` `), its dates moved
  (`task_recurrence`), no done/cancelled date, a created date of today only with
  `setCreatedDate`, and no id, depends-on or block link; it goes above the completed task,
  or below with `recurrenceOnNextLine`;
- `🏁 delete` (`[onCompletion:: delete]`) on a task going to DONE removes the completed
  line (the next occurrence, if any, stays).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from vault_agent.contracts import WarningItem
from vault_agent.errors import InvalidParameter
from vault_agent.files.task_line_edit import (
    Style,
    drop_block_link,
    read,
    remove_fields,
    set_field,
    set_status,
    style_of,
)
from vault_agent.files.task_recurrence import Dates, next_dates
from vault_agent.files.task_rule_text import RecurrenceError, parse_rule
from vault_agent.files.task_write_settings import TaskWriteSettings
from vault_agent.task_settings import StatusDef, StatusType, TaskSettings
from vault_agent.task_syntax import Notation, TaskLine, is_valid_date

# Status types as a caller may name them (`done`, `in progress`, `in-progress` …).
STATUS_WORDS: dict[str, StatusType] = {
    "todo": "TODO", "done": "DONE", "in_progress": "IN_PROGRESS", "cancelled": "CANCELLED",
    "canceled": "CANCELLED", "on_hold": "ON_HOLD", "non_task": "NON_TASK",
}  # fmt: skip
MOVED_DATES = ("due", "scheduled", "start")


@dataclass(frozen=True)
class TaskEdit:
    """The change asked for: a status (symbol, type word or name), dates to set (text) or
    remove (None), a priority name (`none` removes it)."""

    status: str | None = None
    dates: tuple[tuple[str, str | None], ...] = ()
    priority: str | None = None


@dataclass
class Planned:
    """What replaces the task's line: 0, 1 or 2 lines (without line ends)."""

    lines: list[str]
    task_at: int | None  # index in `lines` of the changed task; None: `🏁 delete` removed it
    next_at: int | None  # index of the next occurrence of a recurring task
    status: StatusDef
    warnings: list[WarningItem] = field(default_factory=list)


def resolve_status(spec: str, current: StatusDef, settings: TaskSettings) -> StatusDef:
    """The status `spec` names: one character is a symbol; a type word (`done`) is the
    current status's next one when it has that type (a custom cycle's own done status),
    else the first status of that type; else a status name (case-insensitive).

    Raises:
        InvalidParameter: a control character, or a word that is neither type nor name.
    """
    if len(spec) == 1:
        if not spec.isprintable():
            raise InvalidParameter.about("status", "must be a printable character between the brackets")
        return settings.status(spec)
    word = "_".join(spec.strip().lower().replace("-", " ").split())
    wanted = STATUS_WORDS.get(word)
    if wanted is not None:
        if current.type == wanted:
            return current
        following = settings.status(current.next_symbol) if current.next_symbol else None
        if following is not None and following.type == wanted:
            return following
        for status in settings.statuses:
            if status.type == wanted:
                return status
        raise InvalidParameter(
            f"no status of type {wanted} is set up in the Tasks plugin's settings; give its symbol instead"
        )
    for status in settings.statuses:
        if status.name.lower() == spec.strip().lower():
            return status
    raise InvalidParameter.about(
        "status",
        "must be a status symbol (one character: ' ', 'x', '/', '-' …), a type "
        "(todo, done, in_progress, cancelled, on_hold, non_task) or a status name from the Tasks settings",
    )


def next_recurrence_status(done: StatusDef, settings: TaskSettings) -> StatusDef:
    """StatusRegistry.getNextRecurrenceStatusOrCreate (module doc)."""
    first = settings.status(done.next_symbol or " ")
    for wanted in ("TODO", "IN_PROGRESS"):
        status = first
        for _ in range(len(settings.statuses)):
            if status.type == wanted:
                return status
            status = settings.status(status.next_symbol or " ")
    return settings.status(" ")


def _stamp(
    line: str, kind: str, old: StatusDef, new: StatusDef, on: bool, today: dt.date, style: Style
) -> str:
    """Task.newDate for the done (`DONE`) or cancelled (`CANCELLED`) date."""
    wanted = "DONE" if kind == "done" else "CANCELLED"
    if new.type != wanted:
        return set_field(line, kind, None, style)
    if old.type == wanted:
        return line  # already of this type: its date stays
    return set_field(line, kind, today.isoformat() if on else None, style)


def _dates(task: TaskLine) -> Dates:
    values = {k: task.values.get(k) for k in MOVED_DATES}
    return Dates(
        **{k: dt.date.fromisoformat(v) if v and is_valid_date(v) else None for k, v in values.items()},
        invalid=frozenset(k for k, v in values.items() if v is not None and not is_valid_date(v)),
    )


def _next_occurrence(
    line: str, new: StatusDef, settings: TaskWriteSettings, today: dt.date, style: Style
) -> tuple[str | None, list[WarningItem]]:
    """The next occurrence's line (from the line before the status change), or None."""
    task = read(line)
    rule_text = task.values["recurrence"]
    try:
        rule = parse_rule(rule_text)
        moved = next_dates(rule, _dates(task), today, settings.remove_scheduled_date_on_recurrence)
    except RecurrenceError as exc:
        raise InvalidParameter(
            f"the task's recurrence rule cannot be used ({exc}); nothing was changed. Correct the rule "
            "(🔁 / [repeat:: …]; e.g. 'every week', 'every month on the 1st', 'every 2 days when done') "
            "with vault_edit, or complete it without recurrence by removing the rule first"
        ) from None
    if moved is None:
        warning = WarningItem(
            code="NO_NEXT_OCCURRENCE",
            message="the recurrence rule has no occurrence left, so no next task was added",
        )
        return None, [warning]
    out = set_status(line, next_recurrence_status(new, settings.tasks).symbol)
    out = set_field(out, "done", None, style)
    out = set_field(out, "cancelled", None, style)
    out = set_field(out, "created", today.isoformat() if settings.set_created_date else None, style)
    for kind in MOVED_DATES:
        value = getattr(moved, kind)
        out = set_field(out, kind, value.isoformat() if value is not None else None, style)
    out = remove_fields(remove_fields(out, "id"), "depends_on")
    return drop_block_link(out), []


def plan_change(line: str, edit: TaskEdit, settings: TaskWriteSettings, today: dt.date) -> Planned:
    """The lines that replace the task `line` once `edit` is applied (module doc).

    Raises:
        LineEditError: the line is no task, or a change would alter other text on it.
        InvalidParameter: an unknown status, or a recurrence rule that cannot be used.
    """
    task = read(line)
    default: Notation = "dataview" if settings.tasks.task_format == "dataview" else "emoji"
    style = style_of(task, line, default)
    for kind, value in edit.dates:
        line = set_field(line, kind, value, style)
    if edit.priority is not None:
        line = set_field(line, "priority", None if edit.priority == "none" else edit.priority, style)
    old = settings.tasks.status(task.status)
    if edit.status is None:
        return Planned([line], 0, None, old)
    new = resolve_status(edit.status, old, settings.tasks)
    if new.symbol == old.symbol:
        return Planned([line], 0, None, old)
    done = set_status(line, new.symbol)
    done = _stamp(done, "done", old, new, settings.set_done_date, today, style)
    done = _stamp(done, "cancelled", old, new, settings.set_cancelled_date, today, style)
    completing = new.type == "DONE" and old.type != "DONE"
    following: str | None = None
    warnings: list[WarningItem] = []
    if completing and "recurrence" in read(line).values:
        following, warnings = _next_occurrence(line, new, settings, today, style)
    if completing and (task.values.get("on_completion") or "").lower() == "delete":
        kept = [] if following is None else [following]
        return Planned(kept, None, 0 if following is not None else None, new, warnings)
    if following is None:
        return Planned([done], 0, None, new, warnings)
    if settings.recurrence_on_next_line:
        return Planned([done, following], 0, 1, new, warnings)
    return Planned([following, done], 1, 0, new, warnings)
