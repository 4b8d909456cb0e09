"""The order of the selected tasks: the plan's sort keys, then the plugin's default order.

Keys follow the plugin's comparators as lang_order.py documents them (dates invalid first,
then by date, absent last; urgency highest first; priority highest first; `status` open
before done; text in `localeCompare` numeric order, `natural_key`), computed as integer or
float arrays over the matches of every segment and sorted by one stable `numpy.lexsort`;
the last tie-break is (path, line). Paths sort by their rank in the snapshot
(columns.TaskSnapshot), so the common orders never touch a string.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vault_agent.query.tasks.columns import SegmentView
from vault_agent.query.tasks.evaluate import Context, Rows, tag_lists, text_values
from vault_agent.query.tasks.lang_ast import STATUS_TYPES, SortKey
from vault_agent.query.tasks.lang_columns import INVALID, MISSING, day_number
from vault_agent.query.tasks.lang_order import (
    DEFAULT_SORT,
    STATUS_TYPE_ORDER,
    clean_description,
    random_key,
    ranks,
)

Key = npt.NDArray[np.float64] | npt.NDArray[np.int64]
_TYPE_RANK = np.array([STATUS_TYPE_ORDER[t] for t in STATUS_TYPES], np.int64)
_DONE = np.array([t in ("DONE", "CANCELLED", "NON_TASK") for t in STATUS_TYPES], np.bool_)
_PRIORITY_URGENCY = np.array([1.5, 1.0, 0.65, 0.325, 0.0, -0.3]) * 6.0  # by priority code


@dataclass(frozen=True)
class Selection:
    """Matched tasks as (segment index, row) pairs, in the answer's order."""

    segment: npt.NDArray[np.int64]
    row: Rows

    def __len__(self) -> int:
        return len(self.row)

    def take(self, start: int, stop: int) -> Selection:
        return Selection(self.segment[start:stop], self.row[start:stop])


IntKey = npt.NDArray[np.int64]


def _gather(
    parts: list[tuple[SegmentView, Rows]], pick: Callable[[SegmentView, Rows], npt.ArrayLike]
) -> IntKey:
    """One value per match, `pick(segment view, rows)` per segment, concatenated."""
    values = [np.asarray(pick(sv, rows), np.int64) for sv, rows in parts]
    return np.concatenate(values) if values else np.zeros(0, np.int64)


def urgency(due: Key, scheduled: Key, start: Key, priority: Key, today: dt.date) -> npt.NDArray[np.float64]:
    """The plugin's urgency score (src/Task/Urgency.ts) from day numbers and priority codes."""
    now = day_number(today)
    valid = (due != MISSING) & (due != INVALID)
    overdue = (now - due).astype(np.float64)
    multiplier = np.where(
        overdue >= 7.0, 1.0, np.where(overdue >= -14.0, ((overdue + 14.0) * 0.8) / 21.0 + 0.2, 0.2)
    )
    score = np.where(valid, multiplier * 12.0, 0.0)
    score += np.where((scheduled != INVALID) & (scheduled != MISSING) & (now >= scheduled), 5.0, 0.0)
    score += np.where((start != INVALID) & (start != MISSING) & (now < start), -3.0, 0.0)
    return np.asarray(score + _PRIORITY_URGENCY[priority], np.float64)


def _date_key(parts: list[tuple[SegmentView, Rows]], name: str) -> IntKey:
    return _gather(parts, lambda sv, r: sv.tasks.dates[name][r])


def _happens(sv: SegmentView, rows: Rows) -> Key:
    stacked = np.stack([sv.tasks.dates[f][rows].astype(np.int64) for f in ("start", "scheduled", "due")])
    return np.asarray(np.where(stacked == INVALID, MISSING, stacked).min(axis=0), np.int64)


def _text_key(parts: list[tuple[SegmentView, Rows]], name: str, ctx: Context) -> Key:
    picked: list[str] = []
    for sv, rows in parts:
        picked += text_values(sv, name, ctx, rows).to_pylist()
    if name == "description":
        picked = [clean_description(v) for v in picked]
    return ranks(picked)


def _tag_keys(parts: list[tuple[SegmentView, Rows]], index: int, ctx: Context) -> list[Key]:
    nth: list[str] = []
    lacking: list[bool] = []
    for sv, rows in parts:
        values, owner = tag_lists(sv, ctx)
        starts = np.searchsorted(owner, rows)
        counts = np.searchsorted(owner, rows, side="right") - starts
        for at, count in zip(starts.tolist(), counts.tolist(), strict=True):
            lacking.append(count < index)
            nth.append(str(values[at + index - 1]) if count >= index else "")
    return [np.array(lacking, np.int64), ranks(nth)]


def _keys(key: SortKey, parts: list[tuple[SegmentView, Rows]], ctx: Context) -> list[Key]:
    f = key.field
    if f == "status":
        return [_gather(parts, lambda sv, r: _DONE[sv.status_type[r]])]
    if f == "status.type":
        return [_gather(parts, lambda sv, r: _TYPE_RANK[sv.status_type[r]])]
    if f == "recurring":
        return [_gather(parts, lambda sv, r: ~sv.tasks.recurring[r])]
    if f == "priority":
        return [_gather(parts, lambda sv, r: sv.tasks.priority[r])]
    if f == "urgency":
        due, scheduled, start = (_date_key(parts, n) for n in ("due", "scheduled", "start"))
        prio = _gather(parts, lambda sv, r: sv.tasks.priority[r])
        return [-urgency(due, scheduled, start, prio, ctx.today)]
    if f == "happens":
        return [_gather(parts, _happens)]
    if f in ("due", "scheduled", "start", "created", "done", "cancelled"):
        return [_date_key(parts, f)]
    if f == "path":
        return [_gather(parts, lambda sv, r: sv.path_rank[sv.tasks.note_row[r]])]
    if f == "tag":
        return _tag_keys(parts, key.tag_index, ctx)
    if f == "random":
        texts = [d for sv, r in parts for d in sv.tasks.description.texts(r)]
        return [np.array([random_key(d, ctx.today) for d in texts], np.int64)]
    return [_text_key(parts, f, ctx)]  # status.name, description, heading, filename, id


def order(matches: list[Rows], sorts: Sequence[SortKey], ctx: Context, default: bool = True) -> Selection:
    """Every match in the plan's order: its sort keys, the plugin's default order (unless
    `default` is False), then path and line."""
    parts = [(sv, rows) for sv, rows in zip(ctx.snap.segments, matches, strict=True) if len(rows)]
    segment = np.concatenate(
        [np.full(len(m), k, np.int64) for k, m in enumerate(matches)] or [np.zeros(0, np.int64)]
    )
    row = np.concatenate([np.asarray(m, np.int64) for m in matches] or [np.zeros(0, np.int64)])
    if len(row) < 2:
        return Selection(segment, row)
    keys: list[Key] = []
    for key in sorts:
        for k in _keys(key, parts, ctx):
            keys.append(-k if key.reverse else k)
    if default:
        keys += _default_keys(parts, ctx)
    keys.append(
        _gather(
            parts,
            lambda sv, r: (sv.path_rank[sv.tasks.note_row[r]].astype(np.int64) << 24) | sv.tasks.line[r],
        )
    )
    permutation = np.lexsort(tuple(reversed(keys)))
    return Selection(segment[permutation], row[permutation])


def _default_keys(parts: list[tuple[SegmentView, Rows]], ctx: Context) -> list[Key]:
    """The plugin's default order (DEFAULT_SORT: status.type, urgency, due, priority, then
    path) packed into two integer keys, so one lexsort has few keys to sort by:
    (type rank, urgency) and (due, priority); the path and line follow as the last key."""
    assert [k.field for k in DEFAULT_SORT] == ["status.type", "urgency", "due", "priority", "path"]
    rank = _gather(parts, lambda sv, r: _TYPE_RANK[sv.status_type[r]])
    due, scheduled, start = (_date_key(parts, n) for n in ("due", "scheduled", "start"))
    prio = _gather(parts, lambda sv, r: sv.tasks.priority[r])
    # Urgency lies within [-5, 35]: (64 - urgency) scaled by 2^20 is a positive integer below
    # 2^27 that orders highest urgency first; equal scores (same inputs) give equal integers.
    urgent = np.rint((64.0 - urgency(due, scheduled, start, prio, ctx.today)) * (1 << 20)).astype(np.int64)
    return [(rank << 32) | urgent, ((due + (1 << 31)) << 3) | prio]
