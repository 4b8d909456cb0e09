"""Watching, unit by unit: the note filter and the batched iterator, on a real file system
with a real watchdog observer (no writer, no index)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import wait_until
from watchdog.events import FileSystemEvent

from vault_agent.indexer.watch_batches import BIG_BATCH, Batch, HintBatcher
from vault_agent.indexer.watch_filter import NoteFilter
from vault_agent.indexer.watcher import VaultEventHandler, problem_of, start_observer
from vault_agent.paths import Vault

# ----- the filter ------------------------------------------------------------------------


@pytest.fixture
def note_filter(tmp_path: Path) -> NoteFilter:
    return NoteFilter(Vault(tmp_path / "v"))


@pytest.mark.parametrize(
    ("event_type", "rel", "is_dir", "expected"),
    [
        ("modified", "a/b.md", False, "a/b.md"),
        ("created", "A.MD", False, "A.MD"),
        ("moved", "Café.md", False, "Café.md"),
        ("created", "a", True, "a"),
        ("deleted", "a/b", True, "a/b"),
        ("modified", "a", True, None),  # a folder's mtime: the save inside is reported itself
        ("opened", "a/b.md", False, None),
        ("closed_no_write", "a/b.md", False, None),
        ("created", "a/4913", False, None),  # vim's write probe
        ("created", "a/b.md.swp", False, None),
        ("created", "a/b.md~", False, None),
        ("created", ".obsidian/workspace.md", False, None),
        ("created", ".obsidian", True, None),
        ("created", ".vault-agent/x.md", False, None),
        ("created", "node_modules/x.md", False, None),
    ],
)
def test_filter_decides_each_event(
    note_filter: NoteFilter, event_type: str, rel: str, is_dir: bool, expected: str | None
) -> None:
    abs_path = os.path.join(str(note_filter.vault.root), *rel.split("/"))
    assert note_filter(event_type, abs_path, is_dir) == expected


def test_filter_drops_paths_outside_the_vault_and_undecodable_names(note_filter: NoteFilter) -> None:
    root = str(note_filter.vault.root)
    assert note_filter("created", root, True) is None  # the root itself
    assert note_filter("created", root + "-other/x.md", False) is None  # a sibling sharing the prefix
    assert note_filter("created", "/elsewhere/x.md", False) is None
    assert note_filter("created", os.fsencode(root) + b"/bad\xff.md", False) is None
    assert note_filter("created", root + "/bad\udcff.md", False) is None
    decomposed = "Cafe\u0301.md"
    assert note_filter("created", f"{root}/{decomposed}", False) == "Café.md"  # NFC


# ----- the batched iterator, fed by a real observer ----------------------------------------


class Collector:
    """Runs `batches()` on a thread and keeps what it yields."""

    def __init__(self, batcher: HintBatcher, quiet_s: float = 0.03, max_wait_s: float = 1.0) -> None:
        self.batcher = batcher
        self.got: list[Batch] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, args=(quiet_s, max_wait_s), daemon=True)
        self.thread.start()

    def _run(self, quiet_s: float, max_wait_s: float) -> None:
        for batch in self.batcher.batches(quiet_s, max_wait_s, lambda: 60.0):
            with self.lock:
                self.got.append(batch)

    def batches(self) -> list[Batch]:
        with self.lock:
            return list(self.got)

    def files(self) -> set[str]:
        return {p for b in self.batches() for p in b.files}

    def settled_after(self, n: int) -> bool:
        return any(b.settled for b in self.batches()[n:])


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, HintBatcher, Collector, list[int]]]:
    root = tmp_path / "v"
    root.mkdir()
    events_dir = tmp_path / "state" / "events"
    batcher = HintBatcher()
    wakes: list[int] = []

    def on_log_change() -> None:
        wakes.append(1)
        batcher.wake()

    vault = Vault(root)
    observer = start_observer(
        vault, events_dir, VaultEventHandler(NoteFilter(vault), events_dir, batcher.add, on_log_change)
    )
    collector = Collector(batcher)
    try:
        yield vault.root, batcher, collector, wakes
    finally:
        observer.stop()
        observer.join(timeout=30)
        batcher.stop()
        collector.thread.join(timeout=30)
    assert not collector.thread.is_alive()  # stop() ends the iterator


def test_saves_arrive_as_batches_that_settle(watched: tuple[Path, HintBatcher, Collector, list[int]]) -> None:
    root, _, collector, _ = watched
    (root / "sub").mkdir()
    for i in range(50):
        (root / "sub" / f"n{i}.md").write_text(f"# {i}\n", encoding="utf-8")
    (root / "sub" / "n0.md.swp").write_text("swap", encoding="utf-8")
    wanted = {f"sub/n{i}.md" for i in range(50)}
    wait_until(lambda: wanted <= collector.files(), 30, "every save as a hint")
    n = len(collector.batches())
    wait_until(lambda: collector.settled_after(n - 1), 30, "the burst to settle")
    assert collector.files() == wanted  # the swap file never became a hint
    assert "sub" in {d for b in collector.batches() for d in b.dirs}  # the new folder


def test_temp_and_rename_save_hints_the_note_only(
    watched: tuple[Path, HintBatcher, Collector, list[int]],
) -> None:
    root, _, collector, _ = watched
    (root / "note.md").write_text("v1\n", encoding="utf-8")
    wait_until(lambda: "note.md" in collector.files(), 30, "the first save")
    n = len(collector.batches())
    tmp = root / ".note.md.tmp123"
    tmp.write_text("v2\n", encoding="utf-8")
    os.replace(tmp, root / "note.md")
    wait_until(lambda: any("note.md" in b.files for b in collector.batches()[n:]), 30, "the rename save")
    assert collector.files() == {"note.md"}


def test_log_change_wakes_an_empty_settled_batch(
    watched: tuple[Path, HintBatcher, Collector, list[int]], tmp_path: Path
) -> None:
    _, _, collector, wakes = watched
    n = len(collector.batches())
    (tmp_path / "state" / "events" / "events.log").write_bytes(b"x")  # another process appended
    wait_until(lambda: bool(wakes) and collector.settled_after(n), 30, "a wake-up batch")
    assert all(not b.files and not b.dirs and not b.rescan for b in collector.batches()[n:])


def test_rescan_request_rides_the_next_batch() -> None:
    batcher = HintBatcher()
    collector = Collector(batcher)
    try:
        batcher.add("a.md", False)
        batcher.request_rescan()
        wait_until(lambda: collector.settled_after(0), 30, "a settled batch")
        assert any(b.rescan for b in collector.batches())
        assert not batcher.pending() and not batcher.rescan_pending()
    finally:
        batcher.stop()
        collector.thread.join(timeout=30)


def test_batch_events_add_a_rescan_when_big_or_asked() -> None:
    small = Batch(("a.md",), ("d",))
    assert [(e.op, e.path) for e in small.events()] == [("upsert", "a.md"), ("upsert", "d")]
    asked = Batch(("a.md",), rescan=True)
    assert [e.op for e in asked.events()] == ["upsert", "rescan"]
    big = Batch(tuple(f"n{i}.md" for i in range(BIG_BATCH)))
    assert big.events()[-1].op == "rescan" and len(big.events()) == BIG_BATCH + 1
    assert Batch().events() == []


def test_a_steady_stream_still_settles_within_the_bound() -> None:
    batcher = HintBatcher()
    collector = Collector(batcher, quiet_s=10.0, max_wait_s=0.2)  # quiet never comes in time
    stop = threading.Event()

    def keep_saving() -> None:
        i = 0
        while not stop.is_set():
            batcher.add(f"n{i}.md", False)
            i += 1
            stop.wait(0.01)

    saver = threading.Thread(target=keep_saving, daemon=True)
    saver.start()
    try:
        wait_until(lambda: collector.settled_after(0), 30, "a settled batch despite the stream")
    finally:
        stop.set()
        saver.join(timeout=30)
        batcher.stop()
        collector.thread.join(timeout=30)


# ----- overflow and errors, told by watchdog's logger and level ------------------------------


@pytest.mark.parametrize(
    ("logger", "level", "expected"),
    [
        ("watchdog.observers.inotify_c", logging.WARNING, "overflow"),
        ("watchdog.observers.inotify", logging.WARNING, "overflow"),
        ("watchdog.observers.inotify", logging.ERROR, "watch-error"),
        ("watchdog.observers.api", logging.ERROR, "watch-error"),
        ("watchdog.observers.api", logging.WARNING, None),
        ("watchdog.observers.inotify_c", logging.INFO, None),
    ],
)
def test_problem_of_a_watchdog_record(logger: str, level: int, expected: str | None) -> None:
    record = logging.LogRecord(logger, level, __file__, 1, "any wording %r", ("/abs/path",), None)
    assert problem_of(record) == expected


def test_expedite_settles_the_burst_without_waiting_for_quiet() -> None:
    batcher = HintBatcher()
    got: list[Batch] = []
    done = threading.Event()

    def consume() -> None:
        for batch in batcher.batches(quiet_s=120.0, max_wait_s=240.0, idle_s=lambda: 120.0):
            got.append(batch)
            if batch.settled:
                done.set()
                return

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    batcher.add("a.md", False)
    batcher.expedite()
    assert done.wait(30)
    batcher.stop()
    t.join(30)
    assert got[-1].settled and "a.md" in {f for b in got for f in b.files}


class _Counting(VaultEventHandler):
    """Records the type of every event watchdog delivers."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.types: list[str] = []

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.types.append(event.event_type)
        super().on_any_event(event)


def test_reading_notes_delivers_no_events(tmp_path: Path) -> None:
    """Reads (searches, vault_read, the hash pass) never reach the handler: the observer asks
    the kernel for changes only, so a burst of reads can neither cost the GIL nor overflow
    the queue. A change after the reads still arrives."""
    root = tmp_path / "v"
    root.mkdir()
    for i in range(20):
        (root / f"n{i}.md").write_text(f"# {i}\n", encoding="utf-8")
    events_dir = tmp_path / "state" / "events"
    batcher = HintBatcher()
    vault = Vault(root)
    handler = _Counting(NoteFilter(vault), events_dir, batcher.add, batcher.wake)
    observer = start_observer(vault, events_dir, handler)
    try:
        for _ in range(10):
            for i in range(20):
                (root / f"n{i}.md").read_bytes()
        (root / "after.md").write_text("# after\n", encoding="utf-8")
        wait_until(lambda: "created" in handler.types, 30, "the change after the reads")
        assert not {"opened", "closed_no_write"} & set(handler.types)
    finally:
        observer.stop()
        observer.join(timeout=30)
        batcher.stop()
