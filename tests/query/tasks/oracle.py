"""An independent evaluation of Tasks queries, in plain Python, one task at a time.

It reads the same row dicts the index stores and follows the plugin's source (Field classes,
Sort, Urgency, TaskGroups) statement by statement, with comparators and `functools.cmp_to_key`
instead of the production code's numpy columns and lexsort. Shared with production: only the
parsed query (lang_parse, tested against the plugin's own tables) and `natural_key`.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import re
from typing import Any

from vault_agent.query.tasks.lang_ast import (
    BoolOp,
    DateInvalid,
    DateIs,
    DatePresent,
    Done,
    Filter,
    Flag,
    Not,
    PriorityIs,
    Query,
    SortKey,
    StatusTypeIs,
    Substring,
    TextMatch,
)
from vault_agent.query.tasks.lang_order import natural_key
from vault_agent.task_settings import TaskSettings

Row = dict[str, Any]
_SETTINGS = [TaskSettings()]  # the settings of the run in progress (run() sets them)
INVALID = "invalid"
PRIORITY_NAMES = ["highest", "high", "medium", "none", "low", "lowest"]
TYPE_ORDER = {"IN_PROGRESS": 1, "TODO": 2, "ON_HOLD": 3, "DONE": 4, "CANCELLED": 5, "NON_TASK": 6}


def status_type(row: Row) -> str:
    return _SETTINGS[0].status(row["status"]).type


def is_done(row: Row) -> bool:
    return status_type(row) in ("DONE", "CANCELLED", "NON_TASK")


def date_of(row: Row, field: str) -> dt.date | str | None:
    text = row[field]
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return INVALID


def valid(value: object) -> dt.date | None:
    return value if isinstance(value, dt.date) else None


def happens(row: Row) -> dt.date | None:
    dates = [valid(date_of(row, f)) for f in ("start", "scheduled", "due")]
    found = [d for d in dates if d is not None]
    return min(found) if found else None


def text_value(row: Row, field: str) -> list[str]:
    path = row["path"]
    gf = _SETTINGS[0].global_filter
    if field == "tag":
        return ["#" + t for t in row["tags"] if "#" + t != gf]
    values = {
        "description": row["description"].replace(gf, "", 1).strip() if gf else row["description"],
        "path": path,
        "folder": path.rsplit("/", 1)[0] + "/" if "/" in path else "/",
        "root": path.split("/")[0] + "/" if "/" in path else "/",
        "filename": path.rsplit("/", 1)[-1],
        "heading": row["heading_path"][-1] if row["heading_path"] else "",
        "status.name": _SETTINGS[0].status(row["status"]).name,
        "id": row["id"] or "",
        "recurrence": row["recurrence"] or "",
    }
    return [values[field]]


def blocked(row: Row, rows: list[Row]) -> bool:
    if not row["depends_on"] or is_done(row):
        return False
    return any(r["id"] == dep and not is_done(r) for dep in row["depends_on"] for r in rows)


def blocking(row: Row, rows: list[Row]) -> bool:
    if not row["id"] or is_done(row):
        return False
    return any(not is_done(r) and row["id"] in r["depends_on"] for r in rows)


def matches(node: Filter, row: Row, rows: list[Row]) -> bool:  # noqa: C901 - one case per node
    if isinstance(node, BoolOp):
        a, b = matches(node.left, row, rows), matches(node.right, row, rows)
        return {"AND": a and b, "OR": a or b, "XOR": a != b}[node.op]
    if isinstance(node, Not):
        return not matches(node.child, row, rows)
    if isinstance(node, Done):
        return is_done(row) == node.done
    if isinstance(node, StatusTypeIs):
        return (status_type(row) == node.status_type) != node.negate
    if isinstance(node, DateIs):
        fields = ["start", "scheduled", "due"] if node.field == "happens" else [node.field]
        for f in fields:
            value = date_of(row, f)
            if value is None and node.field == "start":
                return True
            if isinstance(value, dt.date) and node.search.matches(value):
                return True
        return False
    if isinstance(node, DatePresent):
        fields = ["start", "scheduled", "due"] if node.field == "happens" else [node.field]
        return any(row[f] is not None for f in fields) == node.present
    if isinstance(node, DateInvalid):
        return date_of(row, node.field) == INVALID
    if isinstance(node, PriorityIs):
        mine, theirs = row["priority"], PRIORITY_NAMES.index(node.level)
        return {"is": mine == theirs, "above": mine < theirs, "below": mine > theirs, "not": mine != theirs}[
            node.op
        ]
    if isinstance(node, Flag):
        flag = {
            "recurring": lambda: row["recurrence"] is not None,
            "blocked": lambda: blocked(row, rows),
            "blocking": lambda: blocking(row, rows),
            "tags": lambda: bool(row["tags"]),
            "id": lambda: bool(row["id"]),
            "depends_on": lambda: bool(row["depends_on"]),
            "top_level": lambda: row["parent_line"] is None,
        }[node.name]()
        return flag == node.value
    assert isinstance(node, TextMatch)
    if isinstance(node.matcher, Substring):
        hit = any(node.matcher.needle.lower() in v.lower() for v in text_value(row, node.field))
    else:
        flags = re.I if "i" in node.matcher.flags else 0
        hit = any(re.search(node.matcher.source, v, flags) for v in text_value(row, node.field))
    return hit != node.negate


def urgency(row: Row, today: dt.date) -> float:
    score = 0.0
    due = valid(date_of(row, "due"))
    if due is not None:
        overdue = float((today - due).days)
        if overdue >= 7.0:
            multiplier = 1.0
        elif overdue >= -14.0:
            multiplier = ((overdue + 14.0) * 0.8) / 21.0 + 0.2
        else:
            multiplier = 0.2
        score += multiplier * 12.0
    scheduled = valid(date_of(row, "scheduled"))
    if scheduled is not None and today >= scheduled:
        score += 5.0
    start = valid(date_of(row, "start"))
    if start is not None and today < start:
        score += -3.0
    return (
        score + [9.0, 6.0, 3.9000000000000004, 1.9500000000000002, 0.0, -1.7999999999999998][row["priority"]]
    )


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _date_cmp(a: object, b: object) -> int:
    """compareByDate: invalid first, then by date, absent last."""

    def rank(v: object) -> tuple[int, Any]:
        return (0, 0) if v == INVALID else (1, v) if v is not None else (2, 0)

    return _cmp(rank(a), rank(b))


def _text_cmp(a: str, b: str) -> int:
    return _cmp(natural_key(a), natural_key(b))


def comparator(key: SortKey, today: dt.date) -> Any:  # noqa: C901 - one case per field
    f = key.field

    def compare(a: Row, b: Row) -> int:
        if f == "status":
            return _cmp(is_done(a), is_done(b))
        if f == "status.type":
            return _cmp(TYPE_ORDER[status_type(a)], TYPE_ORDER[status_type(b)])
        if f == "priority":
            return _cmp(a["priority"], b["priority"])
        if f == "urgency":
            return _cmp(urgency(b, today), urgency(a, today))
        if f == "recurring":
            return _cmp(a["recurrence"] is None, b["recurrence"] is None)
        if f == "happens":
            return _date_cmp(happens(a), happens(b))
        if f in ("due", "scheduled", "start", "created", "done", "cancelled"):
            return _date_cmp(date_of(a, f), date_of(b, f))
        if f == "tag":
            n = key.tag_index
            ta, tb = text_value(a, "tag"), text_value(b, "tag")
            if len(ta) < n or len(tb) < n:
                return _cmp(len(ta) < n, len(tb) < n)
            return _text_cmp(ta[n - 1], tb[n - 1])
        return _text_cmp(text_value(a, f)[0], text_value(b, f)[0])

    def oriented(a: Row, b: Row) -> int:
        result = compare(a, b)
        return -result if key.reverse else result

    return oriented


DEFAULTS = [SortKey("status.type"), SortKey("urgency"), SortKey("due"), SortKey("priority"), SortKey("path")]


def run(
    query: Query, rows: list[Row], today: dt.date, settings: TaskSettings | None = None
) -> tuple[list[Row], int]:
    """The rows a query selects, in its order, and how many matched before `limit`; with the
    Tasks settings given, their statuses and global filter (a line without it is no task)."""
    _SETTINGS[0] = settings or TaskSettings()
    gf = _SETTINGS[0].global_filter
    rows = [r for r in rows if gf in r["description"]] if gf else rows
    kept = [r for r in rows if all(matches(f.filter, r, rows) for f in query.filters)]
    comparators = [comparator(k, today) for k in [*query.sorts, *DEFAULTS]]

    def composite(a: Row, b: Row) -> int:
        for c in comparators:
            result = c(a, b)
            if result:
                return int(result)
        return _cmp((a["path"], a["line"]), (b["path"], b["line"]))  # the index's order

    ordered = sorted(kept, key=functools.cmp_to_key(composite))
    return (ordered if query.limit is None else ordered[: query.limit]), len(kept)


def group_names(field: str, row: Row) -> list[str]:
    """A few of the plugin's group names (the ones the hypothesis test draws)."""
    if field == "tags":
        return text_value(row, "tag") or ["(No tags)"]
    if field == "status":
        return ["Done" if is_done(row) else "Todo"]
    if field == "priority":
        p = row["priority"]
        return [f"{['Highest', 'High', 'Medium', 'Normal', 'Low', 'Lowest'][p]} priority"]
    if field == "heading":
        return [row["heading_path"][-1] if row["heading_path"] else "(No heading)"]
    value = date_of(row, "due")
    if value is None:
        return ["No due date"]
    if value == INVALID:
        return ["Invalid due date"]
    assert isinstance(value, dt.date)
    return [f"{value.isoformat()} {value.strftime('%A')}"]


def groups(fields: list[str], ordered: list[Row]) -> list[tuple[tuple[str, ...], list[Row]]]:
    """Group membership (the order of the groups is the production code's; compared as sets)."""
    out: dict[tuple[str, ...], list[Row]] = {}
    for row in ordered:
        for combo in itertools.product(*(group_names(f, row) for f in fields)):
            out.setdefault(combo, []).append(row)
    return list(out.items())
