"""Filters of a Tasks query, evaluated over a snapshot's task columns.

A node is evaluated for a set of candidate rows (an index array) and answers one boolean per
candidate. Numbers are compared with numpy over whole arrays; text is searched with Arrow's
kernels (`includes` on lower-cased text, `regex` with RE2: lang_regex). The lines of a query
all must hold, so each line runs only on the rows the lines before it kept, cheapest lines
first; inside a line, `AND` runs its right side only where the left held and `OR` only where
it did not. The plugin's meanings, kept here:

- `done` is DONE, CANCELLED or NON_TASK; `not done` the rest;
- a date search never matches an absent or invalid date, except `starts …`, which also keeps
  tasks without a start date (the plugin's StartDateField); `happens` matches when any of
  start, scheduled and due (valid ones) matches;
- `has <field> date` counts an invalid date as present; `has happens date` any of the three;
- `heading does not include` keeps tasks with no heading; `tags include` matches any tag.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.query.tasks.dates import DateSearch
from vault_agent.query.tasks.lang_ast import (
    DONE_TYPES,
    PRIORITIES,
    STATUS_TYPES,
    BoolOp,
    DateInvalid,
    DateIs,
    DatePresent,
    Done,
    Filter,
    Flag,
    Not,
    PriorityIs,
    Regex,
    StatusTypeIs,
    Substring,
    TextMatch,
)
from vault_agent.query.tasks.lang_columns import INVALID, MISSING, Bools, Ints, TaskColumns, day_number

Rows = np.ndarray  # int64 row indices into the columns
_DONE_CODES = [STATUS_TYPES.index(t) for t in sorted(DONE_TYPES)]
_PRIORITY_CODE = {name: code for code, name in enumerate(PRIORITIES)}
_COST = {"Done": 0, "StatusTypeIs": 0, "Flag": 0, "PriorityIs": 0, "DateIs": 1, "DatePresent": 1,
         "DateInvalid": 1, "Not": 3, "BoolOp": 3, "TextMatch": 5}  # fmt: skip


def _date_matches(search: DateSearch, days: Ints) -> Bools:
    """Valid dates only (absent and invalid never match)."""
    start, end = day_number(search.range.start), day_number(search.range.end)
    valid = (days != MISSING) & (days != INVALID)
    rel = search.relation
    if rel == "before":
        hit = days < start
    elif rel == "after":
        hit = days > end
    elif rel == "on or before":
        hit = days <= end
    elif rel == "on or after":
        hit = days >= start
    else:
        hit = (days >= start) & (days <= end)
    return np.asarray(valid & hit, dtype=np.bool_)


def _dates_at(cols: TaskColumns, field: str, rows: Rows) -> list[Ints]:
    if field == "happens":
        return [cols.dates[f][rows] for f in ("start", "scheduled", "due")]
    return [cols.dates[field][rows]]


def _date_is(node: DateIs, cols: TaskColumns, rows: Rows) -> Bools:
    found = np.zeros(len(rows), dtype=np.bool_)
    for days in _dates_at(cols, node.field, rows):
        found |= _date_matches(node.search, days)
    if node.field == "start":
        found |= cols.dates["start"][rows] == MISSING
    return found


def _search(values: pa.Array, matcher: Substring | Regex) -> Bools:
    if isinstance(matcher, Substring):
        hit = pc.match_substring(values, matcher.needle.lower())
    else:
        hit = pc.match_substring_regex(values, matcher.re2_pattern)
    return np.asarray(pc.fill_null(hit, False).to_numpy(zero_copy_only=False), dtype=np.bool_)


def _text(node: TextMatch, cols: TaskColumns, rows: Rows) -> Bools:
    substring = isinstance(node.matcher, Substring)
    if node.field == "tag":
        lists = [cols.tags[k] for k in rows]
        flat = pa.array([t.lower() if substring else t for ts in lists for t in ts], pa.string())
        owner = np.repeat(np.arange(len(rows)), [len(ts) for ts in lists])
        hit = np.zeros(len(rows), dtype=np.bool_)
        if len(flat):
            hit[owner[_search(flat, node.matcher)]] = True
    else:
        source = cols.lowered(node.field) if substring else pa.array(cols.text(node.field), pa.string())
        values = source if len(rows) == cols.size else source.take(pa.array(rows))
        hit = _search(values, node.matcher)
    return ~hit if node.negate else hit


def _flag(node: Flag, cols: TaskColumns, rows: Rows) -> Bools:
    column = {
        "recurring": cols.recurring,
        "blocked": cols.blocked,
        "blocking": cols.blocking,
        "tags": cols.has_tags,
        "id": cols.has_id,
        "depends_on": cols.has_depends,
        "top_level": cols.top_level,
    }[node.name]
    values = np.asarray(column[rows], dtype=np.bool_)
    return values if node.value else ~values


def _priority(node: PriorityIs, cols: TaskColumns, rows: Rows) -> Bools:
    code, values = _PRIORITY_CODE[node.level], cols.priority[rows]
    if node.op == "above":
        return np.asarray(values < code, dtype=np.bool_)
    if node.op == "below":
        return np.asarray(values > code, dtype=np.bool_)
    if node.op == "not":
        return np.asarray(values != code, dtype=np.bool_)
    return np.asarray(values == code, dtype=np.bool_)


def _date_present(node: DatePresent, cols: TaskColumns, rows: Rows) -> Bools:
    present = np.zeros(len(rows), dtype=np.bool_)
    for days in _dates_at(cols, node.field, rows):
        present |= days != MISSING
    return present if node.present else ~present


def evaluate(node: Filter, cols: TaskColumns, rows: Rows) -> Bools:
    """One boolean per row of `rows`: whether the task matches the filter."""
    if isinstance(node, BoolOp):
        left = evaluate(node.left, cols, rows)
        if node.op == "XOR":
            return left ^ evaluate(node.right, cols, rows)
        todo = left if node.op == "AND" else ~left  # where the right side still matters
        out = left.copy()
        if todo.any():
            right = evaluate(node.right, cols, rows[todo])
            out[todo] = right
        return out
    if isinstance(node, Not):
        return ~evaluate(node.child, cols, rows)
    if isinstance(node, Done):
        done = np.isin(cols.status_code[rows], _DONE_CODES)
        return done if node.done else ~done
    if isinstance(node, StatusTypeIs):
        same = np.asarray(cols.status_code[rows] == STATUS_TYPES.index(node.status_type), dtype=np.bool_)
        return ~same if node.negate else same
    if isinstance(node, DateIs):
        return _date_is(node, cols, rows)
    if isinstance(node, DatePresent):
        return _date_present(node, cols, rows)
    if isinstance(node, DateInvalid):
        return np.asarray(cols.dates[node.field][rows] == INVALID, dtype=np.bool_)
    if isinstance(node, PriorityIs):
        return _priority(node, cols, rows)
    if isinstance(node, Flag):
        return _flag(node, cols, rows)
    return np.asarray(_text(node, cols, rows), dtype=np.bool_)


def matching_rows(filters: list[Filter], cols: TaskColumns) -> Rows:
    """The rows every filter keeps, in table order (cheap filters run first)."""
    rows: Rows = np.arange(cols.size, dtype=np.int64)
    for node in sorted(filters, key=lambda f: _COST.get(type(f).__name__, 5)):
        if not len(rows):
            break
        rows = rows[evaluate(node, cols, rows)]
    return rows
