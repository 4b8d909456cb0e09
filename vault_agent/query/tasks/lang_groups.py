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

from vault_agent.query.tasks.lang_ast import PRIORITIES, STATUS_TYPES, GroupKey
from vault_agent.query.tasks.lang_columns import EPOCH, INVALID, MISSING, TaskColumns
from vault_agent.query.tasks.lang_order import STATUS_TYPE_ORDER, natural_key, urgency

Rows = np.ndarray
_PRIORITY_NAMES = {p: ("Normal" if p == "none" else p.capitalize()) for p in PRIORITIES}
_COMMENT = re.compile(r"%%.*?%%")


@dataclass(frozen=True)
class Group:
    """One group: its name at each level (as shown) and its tasks in query order."""

    names: tuple[str, ...]
    rows: Rows
    total: int  # tasks in the group before `limit groups`


def display_name(raw: str) -> str:
    """A heading as Obsidian shows it: no `%%…%%` comment, no Markdown escapes."""
    return _COMMENT.sub("", raw).replace("\\_", "_").replace("\\\\", "\\").strip()


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("_", "\\_")


def _date_name(days: int, field: str) -> str:
    if days == MISSING:
        return f"No {field} date"
    if days == INVALID:
        return f"%%0%% Invalid {field} date"
    day = EPOCH + dt.timedelta(days=int(days))
    return f"{day.isoformat()} {day.strftime('%A')}"


def _backlink(path: str, heading: str) -> str:
    stem = path.rpartition("/")[2].removesuffix(".md")
    return f"[[{stem}#{heading}|{stem} > {heading}]]" if heading else f"[[{stem}]]"


def _text_names(f: str, cols: TaskColumns, row: int) -> list[str]:
    """Names of the fields read from a task's text."""
    if f == "tags":
        return list(cols.tags[row]) or ["(No tags)"]
    if f == "heading":
        return [cols.text("heading")[row] or "(No heading)"]
    if f == "backlink":
        return [_backlink(cols.text("path")[row], cols.text("heading")[row])]
    if f == "filename":
        return ["[[" + cols.text("filename")[row].removesuffix(".md") + "]]"]
    if f == "path":
        return [_escape(cols.text("path")[row].replace(".md", "", 1))]
    if f in ("folder", "root"):
        return [_escape(cols.text(f)[row])]
    if f == "recurrence":
        return [cols.text("recurrence")[row] or "None"]
    return [cols.text(f)[row]]  # status.name, id


def _names(key: GroupKey, cols: TaskColumns, row: int, today_urgency: float) -> list[str]:
    f = key.field
    code = int(cols.status_code[row])
    if f == "status":
        return ["Done" if STATUS_TYPES[code] in ("DONE", "CANCELLED", "NON_TASK") else "Todo"]
    if f == "status.type":
        return [f"%%{STATUS_TYPE_ORDER[STATUS_TYPES[code]]}%%{STATUS_TYPES[code]}"]
    if f == "recurring":
        return ["Recurring" if cols.recurring[row] else "Not Recurring"]
    if f == "priority":
        p = int(cols.priority[row])
        return [f"%%{p}%%{_PRIORITY_NAMES[PRIORITIES[p]]} priority"]
    if f == "urgency":
        return [f"{today_urgency:.2f}"]
    if f == "happens":
        return [_date_name(int(cols.happens()[row]), "happens")]
    if f in cols.dates:
        return [_date_name(int(cols.dates[f][row]), f)]
    return _text_names(f, cols, row)


def group_rows(
    groups: Sequence[GroupKey], cols: TaskColumns, rows: Rows, today: dt.date, group_limit: int | None
) -> list[Group]:
    """The sorted `rows` divided into the query's groups, in the plugin's group order."""
    scores = urgency(cols, rows, today) if any(g.field == "urgency" for g in groups) else None
    members: dict[tuple[str, ...], list[int]] = {}
    for position, row in enumerate(rows):
        score = float(scores[position]) if scores is not None else 0.0
        levels = [_names(g, cols, int(row), score) for g in groups]
        for combo in itertools.product(*levels):
            members.setdefault(combo, []).append(int(row))

    def level_order(level: int) -> list[str]:
        reverse = groups[level].reverse != (groups[level].field == "urgency")
        return sorted({k[level] for k in members}, key=natural_key, reverse=reverse)

    rank = [{name: i for i, name in enumerate(level_order(level))} for level in range(len(groups))]
    out = []
    for combo in sorted(members, key=lambda c: tuple(rank[i][n] for i, n in enumerate(c))):
        found = np.array(members[combo], dtype=np.int64)
        shown = found if group_limit is None else found[:group_limit]
        out.append(Group(tuple(display_name(n) for n in combo), shown, len(found)))
    return out
