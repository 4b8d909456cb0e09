"""The Tasks plugin's settings that change what a task is: statuses and the global filter.

The plugin keeps them in `.obsidian/plugins/obsidian-tasks-plugin/data.json`. The indexer
reads that file at each commit and records what it holds in the snapshot's manifest
(`Manifest.task_settings`); the query layer applies it when it answers (a status's type, which
lines the global filter keeps), so a change of the file costs a commit, never a re-parse.

Statuses follow the plugin's registry: the core and custom statuses of the file in their
order, the first of a symbol wins, a type name the plugin does not know is `TODO`. A symbol
no status names is `TODO` (the plugin's "Unknown" status), except `X`, which is `DONE` as
Obsidian and Dataview read it. Without a file (or with one that cannot be read as the
plugin's settings) the plugin's defaults apply: ` ` todo, `x` done, `/` in progress, `-`
cancelled; `problem` then says why a file was passed over.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

StatusType = Literal["TODO", "DONE", "IN_PROGRESS", "ON_HOLD", "CANCELLED", "NON_TASK"]
STATUS_TYPES: tuple[StatusType, ...] = ("TODO", "DONE", "IN_PROGRESS", "ON_HOLD", "CANCELLED", "NON_TASK")
# Types the plugin counts as "not done" (its `not done` filter; a task of these is open).
OPEN_TYPES: frozenset[StatusType] = frozenset({"TODO", "IN_PROGRESS", "ON_HOLD"})

SETTINGS_PATH = ".obsidian/plugins/obsidian-tasks-plugin/data.json"
MAX_SETTINGS_BYTES = 1 << 20  # the plugin's file is a few KiB; a bigger one is not read
MAX_STATUSES = 256
MAX_GLOBAL_FILTER_CHARS = 256


class StatusDef(BaseModel):
    """One status of the registry: the symbol between the brackets, its name and type, and
    the symbol a toggle moves it to (the task writer's business)."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    name: str
    type: StatusType
    next_symbol: str


DEFAULT_STATUSES: tuple[StatusDef, ...] = (
    StatusDef(symbol=" ", name="Todo", type="TODO", next_symbol="x"),
    StatusDef(symbol="x", name="Done", type="DONE", next_symbol=" "),
    StatusDef(symbol="/", name="In Progress", type="IN_PROGRESS", next_symbol="x"),
    StatusDef(symbol="-", name="Cancelled", type="CANCELLED", next_symbol=" "),
)
_UPPER_X = StatusDef(symbol="X", name="Done", type="DONE", next_symbol=" ")


class TaskSettings(BaseModel):
    """What the snapshot knows of the Tasks plugin's settings (module doc)."""

    model_config = ConfigDict(frozen=True)

    global_filter: str = ""  # a task line must hold this text ('' = every checkbox item)
    remove_global_filter: bool = False  # the plugin hides it from descriptions
    task_format: Literal["tasksPluginEmoji", "dataview"] = "tasksPluginEmoji"  # for new fields
    statuses: tuple[StatusDef, ...] = DEFAULT_STATUSES
    source_sha256: str | None = None  # of the settings file read; None without one
    problem: str | None = None  # why a settings file was passed over

    def status(self, symbol: str) -> StatusDef:
        """The status a symbol stands for (an unregistered one: module doc)."""
        for status in self.statuses:
            if status.symbol == symbol:
                return status
        if symbol == "X":
            return _UPPER_X
        return StatusDef(symbol=symbol, name="Unknown", type="TODO", next_symbol="x")


def _status(entry: Any) -> StatusDef | None:
    if not isinstance(entry, dict):
        return None
    symbol = entry.get("symbol", " ")
    name, nxt, kind = entry.get("name", ""), entry.get("nextStatusSymbol", "x"), entry.get("type", "TODO")
    if not all(isinstance(v, str) for v in (symbol, name, nxt, kind)) or len(symbol) != 1:
        return None  # the plugin cannot match a symbol of another length either
    status_type: StatusType = kind if kind in STATUS_TYPES else "TODO"
    return StatusDef(symbol=symbol, name=name[:200], type=status_type, next_symbol=nxt[:1])


def parse_task_settings(raw: bytes) -> TaskSettings:
    """The settings held by the plugin's `data.json` bytes (defaults where it says nothing)."""
    digest = hashlib.sha256(raw).hexdigest()
    if len(raw) > MAX_SETTINGS_BYTES:
        return TaskSettings(source_sha256=digest, problem="too large")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return TaskSettings(source_sha256=digest, problem="not JSON")
    if not isinstance(data, dict):
        return TaskSettings(source_sha256=digest, problem="not a JSON object")
    values: dict[str, Any] = {"source_sha256": digest}
    gf = data.get("globalFilter")
    if isinstance(gf, str) and len(gf) <= MAX_GLOBAL_FILTER_CHARS:
        values["global_filter"] = gf
    if isinstance(data.get("removeGlobalFilter"), bool):
        values["remove_global_filter"] = data["removeGlobalFilter"]
    if data.get("taskFormat") in ("tasksPluginEmoji", "dataview"):
        values["task_format"] = data["taskFormat"]
    section = data.get("statusSettings")
    if isinstance(section, dict):
        listed = [*_entries(section.get("coreStatuses")), *_entries(section.get("customStatuses"))]
        statuses: list[StatusDef] = []
        for entry in listed[:MAX_STATUSES]:
            status = _status(entry)
            if status is not None and all(s.symbol != status.symbol for s in statuses):
                statuses.append(status)
        if statuses:
            values["statuses"] = tuple(statuses)
    return TaskSettings(**values)


def _entries(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
