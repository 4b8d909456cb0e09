"""The writer's threads that must live (issue 20, item 4): an injected exception restarts them,
`writer.json` and `status --verbose` report it, and the index stays fresh."""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import make_settings, note_text, write
from testkit import wait_until

from vault_agent import supervise
from vault_agent.config import Settings
from vault_agent.freshness import read_writer_state
from vault_agent.indexer.engine import Writer
from vault_agent.query.status import index_status


@pytest.fixture
def writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Writer, Settings]]:
    monkeypatch.setattr(supervise, "MIN_BACKOFF_S", 0.05)
    vault = tmp_path / "vault"
    for i in range(5):
        write(vault, f"n{i}.md", note_text(i))
    settings = make_settings(vault, debounce_ms=30)
    w = Writer(settings)
    w.start()
    try:
        yield w, settings
    finally:
        w.stop()


def _restarts(settings: Settings, name: str) -> int:
    state = read_writer_state(settings.index_dir)
    health = state.components.get(name) if state is not None else None
    return health.restarts if health is not None else 0


def test_heartbeat_killed_by_an_injected_exception_is_restarted_and_reported(
    writer: tuple[Writer, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    w, settings = writer
    log = w._progress.indexer.log  # type: ignore[union-attr]  # the fault goes in at the OS edge
    original = log.head_seq
    injected = threading.Event()

    def head_seq() -> int:
        if threading.current_thread().name == "vault-agent-heartbeat" and not injected.is_set():
            injected.set()
            raise OSError(errno.EMFILE, "Too many open files")
        return original()

    monkeypatch.setattr(log, "head_seq", head_seq)
    wait_until(lambda: _restarts(settings, "heartbeat") == 1, 30, "the heartbeat restarted")
    after = time.time()
    wait_until(
        lambda: (s := read_writer_state(settings.index_dir)) is not None and s.heartbeat_at > after,
        30,
        "a heartbeat after the restart",
    )
    details = index_status(settings, verbose=True).data.details
    assert details is not None
    health = details.restarts["heartbeat"]
    assert (health.restarts, health.last_error) == (1, "OSError")
    assert index_status(settings).data.index_freshness == "fresh"


def test_a_dead_watcher_is_restarted_and_changes_are_seen_again(writer: tuple[Writer, Settings]) -> None:
    w, settings = writer
    keeper = w._keeper
    assert keeper is not None
    observer = keeper._observer
    assert observer is not None
    for emitter in list(observer.emitters):
        emitter.stop()  # what watchdog does by itself when its watched folder is deleted
    wait_until(lambda: _restarts(settings, "watcher") == 1, 30, "the watcher restarted")
    write(settings.vault, "n9.md", note_text(9))

    def indexed() -> bool:
        status = index_status(settings).data
        return status.note_count == 6 and status.index_freshness == "fresh"

    wait_until(indexed, 30, "the new note through the restarted watcher")
    details = index_status(settings, verbose=True).data.details
    assert details is not None and details.restarts["watcher"].last_error == "observer stopped"
