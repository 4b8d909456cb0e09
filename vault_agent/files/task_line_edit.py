"""One field of a task line changed, every other character kept (pure, no I/O).

`task_syntax` gives the span of every field; a change replaces a field's value in place
(`📅 2024-05-01` → `📅 2024-05-08`, `[due:: …]` likewise), removes a field with the blanks
before it (or after it, when it opens the body), or inserts a new one in the task's own
notation (`Style`: Tasks emoji, or Dataview `[key:: value]` with the line's own bracket).
A new field goes where the Tasks plugin's layout puts it (description, id, depends on,
priority, recurrence, on completion, created, start, scheduled, due, cancelled, done): before
the leftmost field that comes after it in that order, else at the end of the body (before a
block link), separated as the line separates its fields (a single blank for emoji, the
plugin's two blanks before a Dataview field on a line without fields).

Every change is checked by reading the line again: the field must read as intended and
everything else (status, description, tags, the other fields, the block link) exactly as
before; otherwise `LineEditError`, and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from vault_agent.task_syntax import Notation, TaskField, TaskLine, parse_task_line

# The Tasks plugin's layout order (TaskLayoutComponent), where a new field is placed.
LAYOUT_RANK = {
    "id": 1, "depends_on": 2, "priority": 3, "recurrence": 4, "on_completion": 5, "created": 6,
    "start": 7, "scheduled": 8, "due": 9, "cancelled": 10, "done": 11,
}  # fmt: skip
_EMOJI = {"done": "✅", "cancelled": "❌", "due": "📅", "scheduled": "⏳", "start": "🛫", "created": "➕"}
_DATAVIEW_KEY = {
    "done": "completion", "cancelled": "cancelled", "due": "due", "scheduled": "scheduled",
    "start": "start", "created": "created", "priority": "priority",
}  # fmt: skip
PRIORITY_EMOJI = {"highest": "🔺", "high": "⏫", "medium": "🔼", "low": "🔽", "lowest": "⏬"}
_BLANKS = " \t"


class LineEditError(ValueError):
    """The line cannot take the change without another part of it reading differently."""


@dataclass(frozen=True)
class Style:
    """How a new field is written: the notation and, for Dataview, the opening bracket."""

    notation: Notation
    bracket: str = "["

    def field_text(self, kind: str, value: str) -> str:
        """`📅 2024-05-01`, `⏫`, `[due:: 2024-05-01]`, `(priority:: high)`."""
        if self.notation == "dataview":
            close = "]" if self.bracket == "[" else ")"
            return f"{self.bracket}{_DATAVIEW_KEY[kind]}:: {value}{close}"
        if kind == "priority":
            return PRIORITY_EMOJI[value]
        return f"{_EMOJI[kind]} {value}"


def style_of(task: TaskLine, line: str, default: Notation) -> Style:
    """The task's own notation (its fields'), else `default`; a Dataview line's bracket."""
    notation = task.notation if task.notation in ("emoji", "dataview") else default
    brackets = [line[f.start] for f in task.fields if f.notation == "dataview"]
    return Style(notation, brackets[0] if brackets and brackets[0] in "[(" else "[")


def read(line: str) -> TaskLine:
    """The task on `line`.

    Raises:
        LineEditError: the line is no task (checkbox list item).
    """
    task = parse_task_line(line)
    if task is None:
        raise LineEditError("the line is no task")
    return task


def _fields(task: TaskLine, kind: str) -> list[TaskField]:
    return sorted((f for f in task.fields if f.kind == kind), key=lambda f: f.start)


def _gap_before(line: str, pos: int, floor: int) -> str:
    """The blanks just before `pos` (not before `floor`)."""
    left = pos
    while left > floor and line[left - 1] in _BLANKS:
        left -= 1
    return line[left:pos]


def _remove(line: str, task: TaskLine, f: TaskField) -> str:
    gap = _gap_before(line, f.start, task.body_start)
    if gap:
        return line[: f.start - len(gap)] + line[f.end :]
    right = f.end
    while right < task.body_end and line[right] in _BLANKS:
        right += 1  # the field opened the body: the blanks after it go with it
    return line[: f.start] + line[right:]


def _insert(line: str, task: TaskLine, kind: str, text: str, style: Style) -> str:
    rank = LAYOUT_RANK[kind]
    fields = [f for f in task.fields if f.kind != "tag"]
    later = sorted((f for f in fields if LAYOUT_RANK[f.kind] > rank), key=lambda f: f.start)
    if later:
        anchor = later[0]
        gap = _gap_before(line, anchor.start, task.body_start) or " "
        return line[: anchor.start] + text + gap + line[anchor.start :]
    at = task.body_end
    if fields:
        last = max(fields, key=lambda f: f.start)
        gap = _gap_before(line, last.start, task.body_start) or " "
    else:
        gap = "  " if style.notation == "dataview" else " "
    if at == task.body_start and (at == 0 or line[at - 1] in _BLANKS):
        gap = ""  # an empty body: the blank after the checkbox is there already
    return line[:at] + gap + text + line[at:]


def _replace(line: str, f: TaskField, kind: str, value: str) -> str:
    if kind == "priority" and f.notation == "emoji":
        return line[: f.start] + PRIORITY_EMOJI[value] + line[f.end :]
    return line[: f.value_start] + value + line[f.value_end :]


def _same_apart_from(before: TaskLine, after: TaskLine, kind: str) -> bool:
    keep = {k: v for k, v in before.values.items() if k != kind}
    return (
        after.status == before.status
        and after.description == before.description
        and after.block_link == before.block_link
        and {k: v for k, v in after.values.items() if k != kind} == keep
    )


def set_field(line: str, kind: str, value: str | None, style: Style) -> str:
    """`line` with field `kind` (a date field or `priority`) set to `value` (a date, a
    priority name) or, for None, without any field of that kind.

    Raises:
        LineEditError: the line is no task, or the change would alter another part of it.
    """
    task = read(line)
    out = line
    if value is None:
        current = task
        while found := _fields(current, kind):
            out = _remove(out, current, found[0])
            current = read(out)
    else:
        found = _fields(task, kind)
        # The leftmost occurrence is the one in force (task_syntax): that is the one changed.
        out = (
            _replace(line, found[0], kind, value)
            if found
            else _insert(line, task, kind, style.field_text(kind, value), style)
        )
    after = read(out)
    if not _same_apart_from(task, after, kind) or not _reads_as(after, kind, value):
        raise LineEditError(f"the line's {kind} cannot change without changing its other text")
    return out


def _reads_as(task: TaskLine, kind: str, value: str | None) -> bool:
    if kind == "priority":
        return (task.values.get("priority") is None) if value is None else _priority_name(task) == value
    return task.values.get(kind) == value


def _priority_name(task: TaskLine) -> str:
    return ("highest", "high", "medium", "none", "low", "lowest")[task.priority]


def remove_fields(line: str, kind: str) -> str:
    """`line` without any field of `kind` (`id`, `depends_on`: a new occurrence has none).

    Raises:
        LineEditError: the line is no task, or the change would alter another part of it.
    """
    task = read(line)
    out, current = line, task
    while found := _fields(current, kind):
        out = _remove(out, current, found[0])
        current = read(out)
    if not _same_apart_from(task, current, kind) or kind in current.values:
        raise LineEditError(f"the line's {kind} cannot be removed without changing its other text")
    return out


def set_status(line: str, symbol: str) -> str:
    """`line` with the status symbol between its brackets replaced.

    Raises:
        LineEditError: the line is no task, or would not read as one with that symbol.
    """
    task = read(line)
    out = line[: task.status_at] + symbol + line[task.status_at + 1 :]
    after = parse_task_line(out)
    if (
        after is None
        or after.status != symbol
        or after.values != task.values
        or after.description != task.description
    ):
        raise LineEditError("the status cannot change without changing the rest of the line")
    return out


def drop_block_link(line: str) -> str:
    """`line` without its block link (` ^id`): a new occurrence cannot share it."""
    task = read(line)
    if not task.block_link:
        return line
    at = line.rfind(task.block_link, task.body_end)
    return line[:at] + line[at + len(task.block_link) :]
