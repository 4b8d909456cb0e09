"""How far the writer got, and `writer.json`, which says so to readers and `status`.

`WriterProgress` is what the writer's parts share: the index it builds (so the committed
snapshot and its `applied_seq`), the highest event-log seq seen, and the condition that
wakes whoever waits for a commit (a write tool's `wait_for_index`, the reconcile scan).
`WriterStatus` publishes it with the phase and the stale state as `writer.json`
(`contracts.WriterState`), on every change and every heartbeat.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from vault_agent.contracts import WRITER_STATE_FILE, ComponentHealth, Manifest, WriterState
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.snapshot import atomic_write, now_iso
from vault_agent.indexer.staleness import Staleness


class WriterProgress:
    """The writer's index, the log head it has seen, and who waits for a commit (thread-safe)."""

    def __init__(self) -> None:
        self.indexer: Indexer | None = None  # set by start, replaced when a state dir is recreated
        self.head = 0
        self._cond = threading.Condition()  # notified on every commit and on stop
        self._stopped = False

    @property
    def manifest(self) -> Manifest | None:
        return self.indexer.manifest if self.indexer else None

    @property
    def applied_seq(self) -> int:
        return self.indexer.applied_seq if self.indexer else 0

    def saw(self, seq: int) -> None:
        """The event log holds `seq` (the head only grows)."""
        self.head = max(self.head, seq)

    def committed(self) -> None:
        """Wake whoever waits for a commit."""
        with self._cond:
            self._cond.notify_all()

    def stop(self) -> bool:
        """Wake every waiter for good; False when already stopped."""
        with self._cond:
            if self._stopped:
                return False
            self._stopped = True
            self._cond.notify_all()
            return True

    def wait_committed(self, timeout_s: float) -> None:
        """Block while a logged change waits for its commit (at most `timeout_s`)."""
        with self._cond:
            self._cond.wait_for(lambda: self._stopped or self.head <= self.applied_seq, timeout=timeout_s)

    def wait_for_seq(self, seq: int, timeout_s: float) -> int | None:
        """Snapshot id once a committed snapshot has applied_seq >= seq; None on timeout."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self.applied_seq >= seq or self._stopped, timeout=timeout_s)
        manifest = self.manifest
        return manifest.snapshot_id if ok and self.applied_seq >= seq and manifest else None


class WriterStatus:
    """`writer.json`: the writer's phase, progress, stale state and threads' health."""

    def __init__(
        self,
        index_dir: Path,
        watching: bool,
        progress: WriterProgress,
        staleness: Staleness,
        components: Callable[[], dict[str, ComponentHealth]],
    ) -> None:
        self._file = index_dir / WRITER_STATE_FILE
        self._watching = watching
        self._progress = progress
        self._staleness = staleness
        self._components = components
        self._phase = "idle"
        self._started_at = now_iso()

    def state(self) -> WriterState:
        progress = self._progress
        manifest = progress.manifest
        return WriterState(
            pid=os.getpid(),
            started_at=self._started_at,
            heartbeat_at=time.time(),
            phase="building" if self._phase == "building" else "idle",
            log_head_seq=max(progress.head, progress.applied_seq),
            applied_seq=progress.applied_seq,
            snapshot_id=manifest.snapshot_id if manifest else None,
            watcher_ok=self._staleness.watcher_ok,
            watching=self._watching,
            stale_reason=self._staleness.reason,
            components=self._components(),
        )

    def publish(self) -> None:
        """Write `writer.json` now (best effort: readers judge the writer by its age)."""
        data = json.dumps(self.state().model_dump(), separators=(",", ":")).encode()
        with contextlib.suppress(OSError):
            atomic_write(self._file, data, durable=False)

    def set_phase(self, phase: str) -> None:
        """building | idle, published at once."""
        self._phase = phase
        self.publish()

    def remove(self) -> None:
        """The writer stopped: no `writer.json` claims it runs."""
        with contextlib.suppress(FileNotFoundError):
            self._file.unlink()
