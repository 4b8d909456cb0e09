"""`group by …`: the plugin's group names per task, and the order of the groups.

Group names are the plugin's headings (src/Query/Filter/*Field.ts `grouper()`): `Todo`/`Done`,
`2023-04-19 Wednesday`, `No due date`, `High priority`, `(No tags)`, `[[Note]]`… A task with
several tags is in one group per tag. Groups are ordered level by level by their names as
the plugin orders them (`localeCompare` with numbers compared as numbers, the hidden
`%%N%%` prefixes included, so `Invalid date` comes first and priorities run from highest);
`reverse` reverses a level (`group by urgency` is highest first, as in the plugin). Within a
group, tasks keep the query's sort order. The names returned drop the `%%…%%` comments and
the Markdown escapes Obsidian would not show.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vault_agent.query.tasks.lang_ast import PRIORITIES, GroupKey
from vault_agent.query.tasks.lang_order import STATUS_TYPE_ORDER, natural_key
from vault_agent.query.tasks.order import urgency
from vault_agent.task_model import TaskRow
from vault_agent.task_settings import OPEN_TYPES

_PRIORITY_NAMES = {p: ("Normal" if p == "none" else p.capitalize()) for p in PRIORITIES}
_DATE_FIELDS = ("due", "scheduled", "start", "created", "done", "cancelled")
_COMMENT = re.compile(r"%%.*?%%")


@dataclass(frozen=True)
class Group:
    """One group: its name at each level (as shown) and its tasks in query order."""

    names: tuple[str, ...]
    tasks: list[TaskRow]
    total: int  # tasks in the group before `limit groups`


def display_name(raw: str) -> str:
    """A heading as Obsidian shows it: no `%%…%%` comment, no Markdown escapes."""
    return _COMMENT.sub("", raw).replace("\\_", "_").replace("\\\\", "\\").strip()


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("_", "\\_")


def _date(task: TaskRow, field: str) -> dt.date | str | None:
    """A date field: the date, "invalid", or None when absent."""
    text = getattr(task, field)
    if text is None:
        return None
    return "invalid" if field in task.invalid_dates else dt.date.fromisoformat(text)


def _happens(task: TaskRow) -> dt.date | None:
    found = [d for f in ("start", "scheduled", "due") if isinstance(d := _date(task, f), dt.date)]
    return min(found) if found else None


def _date_name(value: dt.date | str | None, field: str) -> str:
    if value is None:
        return f"No {field} date"
    if not isinstance(value, dt.date):
        return f"%%0%% Invalid {field} date"
    return f"{value.isoformat()} {value.strftime('%A')}"


def _priority_code(task: TaskRow) -> int:
    return PRIORITIES.index(task.priority or "none")


def _file_names(f: str, task: TaskRow) -> list[str]:
    """Names of the fields read from the task's note."""
    folder, _, filename = task.path.rpartition("/")
    stem = filename.removesuffix(".md")
    heading = task.heading_path[-1] if task.heading_path else ""
    if f == "path":
        return [_escape(task.path.replace(".md", "", 1))]
    if f == "folder":
        return [_escape(folder + "/" if folder else "/")]
    if f == "root":
        return [_escape(task.path.split("/", 1)[0] + "/" if "/" in task.path else "/")]
    if f == "filename":
        return [f"[[{stem}]]"]
    if f == "backlink":
        return [f"[[{stem}#{heading}|{stem} > {heading}]]" if heading else f"[[{stem}]]"]
    return [heading or "(No heading)"]


def _names(key: GroupKey, task: TaskRow, score: float) -> list[str]:
    f = key.field
    if f == "status":
        return ["Todo" if task.status_type in OPEN_TYPES else "Done"]
    if f == "status.type":
        return [f"%%{STATUS_TYPE_ORDER[task.status_type]}%%{task.status_type}"]
    if f == "status.name":
        return [task.status_name]
    if f == "recurring":
        return ["Recurring" if task.recurrence else "Not Recurring"]
    if f == "priority":
        code = _priority_code(task)
        return [f"%%{code}%%{_PRIORITY_NAMES[PRIORITIES[code]]} priority"]
    if f == "urgency":
        return [f"{score:.2f}"]
    if f == "happens":
        return [_date_name(_happens(task), "happens")]
    if f in _DATE_FIELDS:
        return [_date_name(_date(task, f), f)]
    if f == "tags":
        return [f"#{t}" for t in task.tags] or ["(No tags)"]
    if f == "recurrence":
        return [task.recurrence or "None"]
    if f == "id":
        return [task.id or ""]
    return _file_names(f, task)


def _day_numbers(tasks: Sequence[TaskRow], field: str) -> np.ndarray:
    missing, invalid, epoch = 2**31 - 1, -(2**31), dt.date(1970, 1, 1)
    out = []
    for task in tasks:
        value = _date(task, field)
        out.append(
            missing if value is None else invalid if not isinstance(value, dt.date) else (value - epoch).days
        )
    return np.array(out, np.int64)


def _scores(tasks: Sequence[TaskRow], today: dt.date) -> list[float]:
    due, scheduled, start = (_day_numbers(tasks, f) for f in ("due", "scheduled", "start"))
    priority = np.array([_priority_code(t) for t in tasks], np.int64)
    return [float(x) for x in urgency(due, scheduled, start, priority, today)]


def group_tasks(
    groups: Sequence[GroupKey], tasks: Sequence[TaskRow], today: dt.date, group_limit: int | None
) -> list[Group]:
    """The query's tasks (in its order) divided into its groups, in the plugin's group order."""
    scores = _scores(tasks, today) if any(g.field == "urgency" for g in groups) else [0.0] * len(tasks)
    members: dict[tuple[str, ...], list[TaskRow]] = {}
    for task, score in zip(tasks, scores, strict=True):
        for combo in itertools.product(*(_names(g, task, score) for g in groups)):
            members.setdefault(combo, []).append(task)

    def level_order(level: int) -> list[str]:
        reverse = groups[level].reverse != (groups[level].field == "urgency")
        return sorted({k[level] for k in members}, key=natural_key, reverse=reverse)

    rank = [{name: i for i, name in enumerate(level_order(level))} for level in range(len(groups))]
    out = []
    for combo in sorted(members, key=lambda c: tuple(rank[i][n] for i, n in enumerate(c))):
        found = members[combo]
        shown = found if group_limit is None else found[:group_limit]
        out.append(Group(tuple(display_name(n) for n in combo), shown, len(found)))
    return out
