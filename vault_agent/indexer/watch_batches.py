"""Hints grouped into batches: the batching half of watching (cf. watchfiles' `watch()`).

The observer's thread `add`s hints; the writer's thread iterates `batches()`. After a
wake-up (a hint, a `wake()`, a requested rescan, or the idle timeout) the iterator yields
what is pending at once, then one more batch each time hints keep arriving, until
`quiet_s` pass without a new hint or `max_wait_s` since the wake-up (a steady stream of
saves still ends a burst); the burst's last batch has `settled=True`. Yielding the
unsettled parts too lets the writer record hints in the event log as they come (freshness
counts them at once) while it commits only once per burst. `expedite()` ends the quiet
wait at once: a write tool's change is complete when it is logged (no editor save pattern
to wait out), so the burst it joins settles now.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from vault_agent.indexer.eventlog import NewEvent

# A batch this big may be the visible part of an overflow whose record has not arrived yet:
# reconcile by a rescan in the same build rather than report a partial snapshot as fresh.
BIG_BATCH = 1000


@dataclass(frozen=True)
class Batch:
    """Hints taken together: note paths, folder paths, and whether a full rescan is due."""

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    rescan: bool = False
    settled: bool = False  # the last batch of a burst: time to commit

    def events(self) -> list[NewEvent]:
        """The batch as event-log records (upserts, then a rescan when one is due)."""
        items = [NewEvent("upsert", p, None, None, None, "watcher") for p in (*self.files, *self.dirs)]
        if self.rescan or len(items) >= BIG_BATCH:
            items.append(NewEvent("rescan", "", None, None, None, "watcher"))
        return items


class HintBatcher:
    """Thread-safe hint buffer with a batched iterator (see module doc)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._files: set[str] = set()
        self._dirs: set[str] = set()
        self._rescan = False
        self._woken = False
        self._expedite = False  # settle the current burst without waiting for quiet
        self._version = 0  # bumped by every input: the debounce waits for it to stand still
        self._stopped = False

    # ----- inputs (any thread) -----------------------------------------------------------
    def add(self, rel: str, is_dir: bool) -> None:
        with self._cond:
            (self._dirs if is_dir else self._files).add(rel)
            self._version += 1
            self._cond.notify_all()

    def request_rescan(self) -> None:
        """Something was missed (overflow, lost events): the next batch carries a rescan."""
        with self._cond:
            self._rescan = True
            self._version += 1
            self._cond.notify_all()

    def wake(self) -> None:
        """Have the iterator yield even without hints (the event log grew elsewhere)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def expedite(self) -> None:
        """Wake the iterator and settle the burst at once (a write tool logged a change)."""
        with self._cond:
            self._woken = True
            self._expedite = True
            self._cond.notify_all()

    def stop(self) -> None:
        """End the iterator and every `wait_stopped`; idempotent."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    # ----- state ---------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        return self._stopped

    def pending(self) -> bool:
        """True while hints or a rescan wait to be taken."""
        with self._cond:
            return bool(self._files or self._dirs or self._rescan)

    def rescan_pending(self) -> bool:
        with self._cond:
            return self._rescan

    def wait_stopped(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` (a pause that `stop()` cuts short); True when stopped."""
        with self._cond:
            return self._cond.wait_for(lambda: self._stopped, timeout=max(0.0, timeout_s))

    # ----- output (the writer's thread) ----------------------------------------------------
    def take(self, *, settled: bool = False) -> Batch:
        """Everything pending now, as one batch (possibly empty)."""
        with self._cond:
            batch = Batch(tuple(sorted(self._files)), tuple(sorted(self._dirs)), self._rescan, settled)
            self._files, self._dirs, self._rescan = set(), set(), False
        return batch

    def batches(self, quiet_s: float, max_wait_s: float, idle_s: Callable[[], float]) -> Iterator[Batch]:
        """Yield batches until `stop()` (see module doc); `idle_s()` bounds each idle wait."""
        while True:
            with self._cond:
                self._cond.wait_for(
                    lambda: self._stopped or self._woken or bool(self._files or self._dirs or self._rescan),
                    timeout=max(0.0, idle_s()),
                )
                if self._stopped:
                    return
                self._woken = False
            yield self.take()
            deadline = time.monotonic() + max_wait_s
            while self._changed_within(quiet_s, deadline):
                yield self.take()
            if self._stopped:
                return
            yield self.take(settled=True)

    def _changed_within(self, quiet_s: float, deadline: float) -> bool:
        """Wait up to `quiet_s` (not past `deadline`) for a new input; True when one came."""
        with self._cond:
            version = self._version
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._stopped or self._expedite:
                self._expedite = False
                return False
            self._cond.wait_for(
                lambda: self._version != version or self._stopped or self._expedite,
                timeout=min(quiet_s, remaining),
            )
            if self._expedite:
                self._expedite = False
                return False
            return self._version != version and not self._stopped
