"""The Tasks plugin's settings file as the writer reads it for each commit (docs/tasks.md).

`.obsidian/` is never indexed, but this one file decides what the `tasks` rows mean
(statuses, the global filter), so the writer reads it at every commit and the manifest
records it (`Manifest.task_settings`). A change of the file reaches the index three ways:
the watcher lets its path through (`watch_filter.NoteFilter`), the stat scans of `index` and
of the periodic reconcile compare its hash with the snapshot's (`changed_event`), and either
logs an event whose build commits a new manifest: no note is re-read.
"""

from __future__ import annotations

from vault_agent.errors import VaultAgentError
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.paths import Vault
from vault_agent.task_settings import MAX_SETTINGS_BYTES, SETTINGS_PATH, TaskSettings, parse_task_settings


def read_task_settings(vault: Vault) -> TaskSettings:
    """The settings the vault's file holds (the plugin's defaults without a readable file)."""
    try:
        resolved = vault.resolve(SETTINGS_PATH, match="exact")
        raw = vault.read_bytes(resolved, MAX_SETTINGS_BYTES + 1)
    except (VaultAgentError, OSError):  # none, a folder, a link, unreadable: as without one
        return TaskSettings()
    return parse_task_settings(raw)


def changed_event(vault: Vault, recorded: TaskSettings | None) -> list[NewEvent]:
    """One event for the settings file when it differs from what the snapshot recorded."""
    if recorded is None or read_task_settings(vault).source_sha256 == recorded.source_sha256:
        return []
    return [NewEvent("upsert", SETTINGS_PATH, origin="scan")]
