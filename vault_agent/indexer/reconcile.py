"""The periodic reconcile scan: the safety net under the watcher.

Every `interval_s` a stat scan (every HASH_PASS_EVERY-th also comparing content hashes)
turns differences between the disk and the notes the index knows into event-log records;
they are hints checked against the disk like any other. The scan runs on its own thread,
so a walk of a big vault never delays a save's commit. After each scan the observer's
health is checked: a dead observer makes the index stale (`watch-error`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from vault_agent.indexer.build import Indexer
from vault_agent.indexer.scan import scan_vault

log = logging.getLogger("vault_agent.indexer.reconcile")

RECONCILE_INTERVAL_S = 60.0
HASH_PASS_EVERY = 10  # every Nth reconcile also compares content hashes


class Reconciler:
    """Runs `scan_vault` every `interval_s` on a thread; reports appended seqs."""

    def __init__(
        self,
        indexer: Indexer,
        interval_s: float,
        *,
        on_appended: Callable[[int], None],
        watcher_alive: Callable[[], bool],
        on_watcher_dead: Callable[[], None],
    ) -> None:
        self._indexer = indexer
        self.interval_s = interval_s
        self._on_appended = on_appended
        self._watcher_alive = watcher_alive
        self._on_watcher_dead = on_watcher_dead
        self._next = time.monotonic() + interval_s
        self._runs = 0
        self._thread: threading.Thread | None = None

    def seconds_to_next(self) -> float:
        return max(0.0, self._next - time.monotonic())

    def start_if_due(self) -> None:
        """Start a scan when one is due and none is running."""
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + self.interval_s
        if self._thread is not None and self._thread.is_alive():
            return
        self._runs += 1
        self._thread = threading.Thread(target=self._run, name="vault-agent-reconcile", daemon=True)
        self._thread.start()

    def join(self, timeout_s: float = 60.0) -> None:
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def _run(self) -> None:
        idx = self._indexer
        try:
            known = idx.notes.copy()  # atomic under the GIL; the writer's thread updates notes in place
            scan = scan_vault(idx.vault, known, hash_pass=self._runs % HASH_PASS_EVERY == 0)
            if scan.events:
                self._on_appended(idx.log.append(scan.events))
        except OSError as exc:
            log.error("reconcile scan failed (%s)", type(exc).__name__)
        if not self._watcher_alive():
            self._on_watcher_dead()
