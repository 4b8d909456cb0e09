"""Why the index may be missing changes (`stale_reason`), and when that ends.

A problem (watcher overflow or error, missed time, full or read-only state dir) makes the
index stale and bumps a generation counter. Stale ends only with a commit that applied a
full rescan logged after the latest problem (the generation did not move during the build)
while the watcher runs; a storage problem also ends once every logged event is applied and
none was lost (a lost one would have queued a rescan).
"""

from __future__ import annotations

import threading

STORAGE_REASONS = ("storage-full", "storage-read-only")


class Staleness:
    """The writer's stale state; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reason: str | None = None
        self.watcher_ok = True
        self.generation = 0

    def report(self, reason: str) -> bool:
        """Mark stale for `reason`; True when this reason is new (worth a log line)."""
        with self._lock:
            first = self.reason != reason
            self.reason = reason
            self.generation += 1
            return first

    def watcher_died(self) -> None:
        with self._lock:
            self.watcher_ok = False
            self.reason = "watch-error"
            self.generation += 1

    def after_commit(self, generation_at_start: int, *, resolves: bool, watching: bool, lost: bool) -> None:
        """Settle the state after a successful commit.

        `resolves`: the commit applied a full rescan and none is pending; `watching`: the
        observer is alive (or not used); `lost`: events are known to be missing from the log.
        """
        with self._lock:
            if resolves and self.generation == generation_at_start and watching:
                self.reason = None
                self.watcher_ok = True
            elif self.reason in STORAGE_REASONS and not lost:
                self.reason = None
