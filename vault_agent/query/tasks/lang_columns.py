"""The tasks of one snapshot as columns a Tasks query runs over (built once per snapshot).

Numbers for what filters compare and sorts order (status type, dates as day numbers,
priority, yes/no properties), text for what `includes` and `regex` search. Built from the
snapshot's `tasks` rows (tables.TASKS_SCHEMA) and its Tasks settings (task_settings): a
status symbol's type and name, and the global filter (a line without it is no task; its
text is taken out of descriptions and tags, as the plugin does).

Dates are day numbers since 1970-01-01; a field that is absent is `MISSING` (larger than any
date) and one written but no calendar date is `INVALID` (smaller than any): the plugin's date
order (invalid first, then by date, absent last) is then plain integer order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.query.tasks.lang_ast import STATUS_TYPES
from vault_agent.task_settings import OPEN_TYPES, TaskSettings

MISSING = np.int32(2**31 - 1)
INVALID = np.int32(-(2**31))
EPOCH = dt.date(1970, 1, 1)
ROW_DATE_FIELDS = ("due", "scheduled", "start", "created", "done", "cancelled")

Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int32]


def day_number(day: dt.date) -> int:
    """A date as the columns hold it."""
    return (day - EPOCH).days


def _dates(column: pa.ChunkedArray) -> Ints:
    parsed = pc.strptime(column, format="%Y-%m-%d", unit="s", error_is_null=True)
    seconds = pc.cast(parsed, pa.int64()).to_numpy(zero_copy_only=False)
    written = pc.is_valid(column).to_numpy(zero_copy_only=False)
    ok = pc.is_valid(parsed).to_numpy(zero_copy_only=False)
    days = np.full(len(column), MISSING, dtype=np.int32)
    days[written] = INVALID
    days[ok] = (np.nan_to_num(seconds[ok]) // 86_400).astype(np.int32)
    return days


def _strip_first(text: str, needle: str) -> str:
    return text.replace(needle, "", 1).strip() if needle else text


@dataclass
class TaskColumns:
    """One snapshot's tasks (module doc); row k is `table` row k, in (path, line) order."""

    table: pa.Table
    status_code: npt.NDArray[np.int8]  # index into lang_ast.STATUS_TYPES
    status_name: list[str]
    dates: dict[str, Ints]
    priority: npt.NDArray[np.int8]  # 0 highest … 5 lowest, 3 none
    recurring: Bools
    has_id: Bools
    has_depends: Bools
    has_tags: Bools
    top_level: Bools
    blocked: Bools
    blocking: Bools
    tags: list[list[str]]  # with `#`, as the plugin lists them; without the global filter
    description: list[str]  # without the global filter, as the plugin searches it
    _text: dict[str, list[str]] = field(default_factory=dict)
    _lowered: dict[str, pa.Array] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return int(self.table.num_rows)

    def is_open(self) -> Bools:
        """TODO, IN_PROGRESS, ON_HOLD (the plugin's `not done`)."""
        return np.isin(self.status_code, [STATUS_TYPES.index(t) for t in OPEN_TYPES])

    def happens(self) -> Ints:
        """The earliest valid of start, scheduled and due (MISSING when none)."""
        stacked = np.stack([self.dates[f] for f in ("start", "scheduled", "due")])
        stacked = np.where(stacked == INVALID, MISSING, stacked)
        return np.asarray(stacked.min(axis=0), dtype=np.int32)

    def text(self, name: str) -> list[str]:
        """A text field of every task ('' where it has none), built on first use."""
        if name in self._text:
            return self._text[name]
        paths: list[str] = self.table.column("path").to_pylist()
        if name == "description":
            values = self.description
        elif name == "status.name":
            values = self.status_name
        elif name == "path":
            values = paths
        elif name == "folder":
            values = [p.rpartition("/")[0] + "/" if "/" in p else "/" for p in paths]
        elif name == "root":
            values = [p.split("/", 1)[0] + "/" if "/" in p else "/" for p in paths]
        elif name == "filename":
            values = [p.rpartition("/")[2] for p in paths]
        elif name == "heading":
            values = [h[-1] if h else "" for h in self.table.column("heading_path").to_pylist()]
        else:  # id, recurrence
            values = [v or "" for v in self.table.column(name).to_pylist()]
        self._text[name] = values
        return values

    def lowered(self, name: str) -> pa.Array:
        """A text field in lower case (the plugin's case-insensitive `includes`)."""
        if name not in self._lowered:
            self._lowered[name] = pa.array([v.lower() for v in self.text(name)], pa.string())
        return self._lowered[name]


def _blocked_and_blocking(open_: Bools, ids: list[str | None], deps: list[list[str]]) -> tuple[Bools, Bools]:
    """The plugin's isBlocked / isBlocking over every task of the vault."""
    open_ids = {ids[k] for k in np.flatnonzero(open_) if ids[k]}
    open_deps = {d for k in np.flatnonzero(open_) for d in deps[k]}
    blocked = np.zeros(len(ids), dtype=np.bool_)
    blocking = np.zeros(len(ids), dtype=np.bool_)
    for k in np.flatnonzero(open_):
        blocked[k] = any(d in open_ids for d in deps[k])
        blocking[k] = bool(ids[k]) and ids[k] in open_deps
    return blocked, blocking


def build_columns(table: pa.Table, settings: TaskSettings) -> TaskColumns:
    """The columns of a snapshot's `tasks` rows under its Tasks settings."""
    gf = settings.global_filter
    descriptions: list[str] = table.column("description").to_pylist()
    if gf:  # a line without the global filter is no task (the plugin's Task.fromLine)
        keep = np.array([gf in d for d in descriptions], dtype=np.bool_)
        table = table.filter(pa.array(keep))
        descriptions = [d for d, k in zip(descriptions, keep, strict=True) if k]
    symbols: list[str] = table.column("status").to_pylist()
    defs = {s: settings.status(s) for s in set(symbols)}
    status_code = np.array([STATUS_TYPES.index(defs[s].type) for s in symbols], dtype=np.int8)
    open_ = np.isin(status_code, [STATUS_TYPES.index(t) for t in OPEN_TYPES])
    ids: list[str | None] = table.column("id").to_pylist()
    deps: list[list[str]] = [d or [] for d in table.column("depends_on").to_pylist()]
    blocked, blocking = _blocked_and_blocking(open_, ids, deps)
    # The index keeps tags without `#`; the plugin's task.tags (what queries search) have it.
    tags = [[f"#{t}" for t in ts if f"#{t}" != gf] for ts in table.column("tags").to_pylist()]
    return TaskColumns(
        table=table,
        status_code=status_code,
        status_name=[defs[s].name for s in symbols],
        dates={f: _dates(table.column(f)) for f in ROW_DATE_FIELDS},
        priority=np.asarray(pc.fill_null(table.column("priority"), 3).to_numpy(), dtype=np.int8),
        recurring=pc.is_valid(table.column("recurrence")).to_numpy(zero_copy_only=False),
        has_id=np.array([bool(i) for i in ids], dtype=np.bool_),
        has_depends=np.array([bool(d) for d in deps], dtype=np.bool_),
        has_tags=np.array([bool(t) for t in tags], dtype=np.bool_),
        top_level=pc.is_null(table.column("parent_line")).to_numpy(zero_copy_only=False),
        blocked=blocked,
        blocking=blocking,
        tags=tags,
        description=[_strip_first(d, gf) for d in descriptions],
    )
