"""The Tasks plugin's settings that decide how a task changes, read from the vault at write time.

What a task *is* (statuses, their types and next symbols, the notation for new fields) comes
from `task_settings.parse_task_settings`, the indexer's reading of the same file. A write
also needs the plugin's behaviour switches, with the plugin's defaults where the file is
absent or silent: `setDoneDate` (true), `setCancelledDate` (true), `setCreatedDate` (false),
`recurrenceOnNextLine` (false: the next occurrence goes above the completed task) and
`removeScheduledDateOnRecurrence` (false). The file is read when the write runs (its current
content, not the snapshot's), like the note itself.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from vault_agent.errors import VaultAgentError
from vault_agent.paths import Vault
from vault_agent.task_settings import MAX_SETTINGS_BYTES, SETTINGS_PATH, TaskSettings, parse_task_settings

_SWITCHES = {
    "setDoneDate": "set_done_date",
    "setCancelledDate": "set_cancelled_date",
    "setCreatedDate": "set_created_date",
    "recurrenceOnNextLine": "recurrence_on_next_line",
    "removeScheduledDateOnRecurrence": "remove_scheduled_date_on_recurrence",
}


class TaskWriteSettings(BaseModel):
    """The statuses and notation (`tasks`) and the plugin's switches for a change (module doc)."""

    model_config = ConfigDict(frozen=True)

    tasks: TaskSettings = TaskSettings()
    set_done_date: bool = True
    set_cancelled_date: bool = True
    set_created_date: bool = False
    recurrence_on_next_line: bool = False
    remove_scheduled_date_on_recurrence: bool = False


def parse_write_settings(raw: bytes) -> TaskWriteSettings:
    """The settings held by the plugin's `data.json` bytes (defaults where it says nothing)."""
    tasks = parse_task_settings(raw)
    values: dict[str, Any] = {"tasks": tasks}
    if tasks.problem is None:
        data = json.loads(raw.decode("utf-8"))  # parse_task_settings read it as an object
        for key, name in _SWITCHES.items():
            if isinstance(data.get(key), bool):
                values[name] = data[key]
    return TaskWriteSettings(**values)


def read_write_settings(vault: Vault) -> TaskWriteSettings:
    """The vault's settings file as it is now (the plugin's defaults without a readable one)."""
    try:
        resolved = vault.resolve(SETTINGS_PATH, match="exact")
        raw = vault.read_bytes(resolved, MAX_SETTINGS_BYTES + 1)
    except (VaultAgentError, OSError):  # none, a folder, a link, unreadable: as without one
        return TaskWriteSettings()
    return parse_write_settings(raw)
