"""The Tasks plugin's settings file reaches the snapshot without re-reading a note: through
the watcher (its path passes the filter), the periodic reconcile and `index` (its hash is
compared with the snapshot's), and a file that is removed or unreadable means the defaults."""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import current_manifest, make_settings, note_text, write
from testkit import wait_until

from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.watch_filter import NoteFilter
from vault_agent.paths import vault_for_settings
from vault_agent.task_settings import SETTINGS_PATH, TaskSettings

STATUSES = {"coreStatuses": [], "customStatuses": [{"symbol": "~", "name": "Later", "type": "ON_HOLD"}]}


def _settings_file(vault: Path, global_filter: str) -> None:
    write(vault, SETTINGS_PATH, json.dumps({"globalFilter": global_filter, "statusSettings": STATUSES}))


def _filter_of(s_index_dir: Path) -> str:
    return current_manifest(s_index_dir).task_settings.global_filter


def test_index_reads_the_settings_and_each_change_commits_them(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", "- [~] later\n")
    s = make_settings(vault)
    first = build_index(s)
    assert first.task_settings == TaskSettings()
    segments = [seg.segment_id for seg in first.segments]
    _settings_file(vault, "#task")
    second = build_index(s)
    assert second.task_settings.global_filter == "#task"
    assert [seg.segment_id for seg in second.segments] == segments  # no note was re-read
    assert second.task_settings.status("~").type == "ON_HOLD"
    (vault / SETTINGS_PATH).unlink()
    assert build_index(s).task_settings == TaskSettings()
    write(vault, SETTINGS_PATH, "{not json")
    broken = build_index(s).task_settings
    assert (broken.problem, broken.statuses) == ("not JSON", TaskSettings().statuses)


def test_the_watcher_lets_the_settings_file_through(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    s = make_settings(vault, debounce_ms=30)
    flt = NoteFilter(vault_for_settings(s))
    assert flt("modified", str(vault / SETTINGS_PATH), False) == SETTINGS_PATH
    assert flt("modified", str(vault / ".obsidian" / "app.json"), False) is None
    with Writer(s):
        wait_until(lambda: current_manifest(s.index_dir) is not None, 60, "a first snapshot")
        _settings_file(vault, "#one")
        wait_until(lambda: _filter_of(s.index_dir) == "#one", 60, "the watcher's commit of the settings")
        _settings_file(vault, "#two")
        wait_until(lambda: _filter_of(s.index_dir) == "#two", 60, "the second change")


def test_the_reconcile_scan_finds_a_change_the_watcher_missed(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    s = make_settings(vault)
    with Writer(s, watch=False, reconcile_interval_s=0.2):
        wait_until(lambda: current_manifest(s.index_dir) is not None, 60, "a first snapshot")
        _settings_file(vault, "#late")
        wait_until(lambda: _filter_of(s.index_dir) == "#late", 60, "the reconcile scan's commit")
