"""The periodic reconcile scan: the safety net under the watcher.

Every `interval_s` a stat scan (every HASH_PASS_EVERY-th also comparing content hashes)
turns differences between the disk and the notes the index knows into event-log records;
they are hints checked against the disk like any other. The scan runs on its own thread,
so a walk of a big vault never delays a save's commit. After each scan the observer's
health is checked: a dead observer makes the index stale (`watch-error`).

At 100k notes a scan costs ~2 CPU-s. Two things keep it from delaying a save's commit in
the same process (measured: a save during a scan went from ~0.2 s to 0.65-0.86 s):
- the walk pauses while a change waits to be committed (`writer_busy`), up to YIELD_BUDGET_S
  per scan: a CPU-bound thread holds the GIL for the switch interval (5 ms) each time the
  commit's thread gives it up for a system call, and a commit makes ~100 of them (links,
  fsyncs);
- a difference the writer has committed since the scan copied the notes it compares with
  (the index now holds exactly the stat the scan saw) is not logged again: it would cost a
  second, empty commit, and the snapshot would read `pending` until that one landed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from vault_agent.errors import VaultUnavailable
from vault_agent.indexer import base_files
from vault_agent.indexer.build import Indexer, NoteInfo
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.scan import scan_vault

log = logging.getLogger("vault_agent.indexer.reconcile")

RECONCILE_INTERVAL_S = 60.0
HASH_PASS_EVERY = 10  # every Nth reconcile also compares content hashes
YIELD_BUDGET_S = 5.0  # a scan waits for commits at most this long in all (a failing writer
# retries with backoff: its pending change must not hold the safety net back for long)


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
        wait_writer_idle: Callable[[float], None] | None = None,
    ) -> None:
        self._indexer = indexer
        self.interval_s = interval_s
        self._on_appended = on_appended
        self._watcher_alive = watcher_alive
        self._on_watcher_dead = on_watcher_dead
        self._wait_writer_idle = wait_writer_idle
        self._yield_left = 0.0
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
        hash_pass = self._runs % HASH_PASS_EVERY == 0
        self._yield_left = YIELD_BUDGET_S
        try:
            known = idx.notes.copy()  # atomic under the GIL; the writer's thread updates notes in place
            # `.base` files too (base_files.py); their events always pass the check below
            bases = base_files.known_bases(idx.bases)
            scan = scan_vault(idx.vault, known, hash_pass=hash_pass, pause=self._pause, known_bases=bases)
            events = (
                scan.events
                if hash_pass
                else [e for e in scan.events if not _committed_since(e, known, idx.notes)]
            )
            if events:
                self._on_appended(idx.log.append(events))
        except VaultUnavailable:
            pass  # the vault folder is gone: the writer's heartbeat reports it (writer_faults.py)
        except OSError as exc:
            log.error("reconcile scan failed (%s)", type(exc).__name__)
        if not self._watcher_alive():
            self._on_watcher_dead()

    def _pause(self) -> None:
        """Let a waiting commit run first (see module doc), within the scan's budget."""
        if self._wait_writer_idle is None or self._yield_left <= 0:
            return
        t0 = time.monotonic()
        self._wait_writer_idle(self._yield_left)
        self._yield_left -= time.monotonic() - t0


def _committed_since(event: NewEvent, known: dict[str, NoteInfo], now: dict[str, NoteInfo]) -> bool:
    """True when the writer committed `event.path` after the scan copied `known`, and the
    index now holds what the scan saw (absent for a delete, the same stat for an upsert).
    Not used on a hash pass: there equal stats do not mean equal contents."""
    current = now.get(event.path)
    if current is known.get(event.path):
        return False  # untouched since the copy: the difference is real
    if event.op == "delete":
        return current is None
    return current is not None and (current.mtime_ns, current.size) == (event.mtime_ns, event.size)
