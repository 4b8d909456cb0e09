"""The long-running single writer: lock, log recovery, catch-up, watcher, builds, heartbeat.

`Writer(settings).start()` takes the lock (IndexBusy if held), recovers the event log,
clears tmp/, runs a catch-up scan + build, then keeps the index fresh: watcher hints are
appended to the log as one batch (one fsync), the writer waits for `debounce_ms` of quiet
(bounded), applies every event after applied_seq and commits. Overflow or watcher errors
publish `stale` and trigger a rescan; a periodic reconcile scan is the safety net; small
segments are compacted and garbage collected while idle. `writer.json` is republished at
least every HEARTBEAT_INTERVAL_S and on every phase change.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path

from vault_agent.config import Settings
from vault_agent.contracts import HEARTBEAT_INTERVAL_S, WRITER_STATE_FILE, Manifest, WriterState
from vault_agent.errors import StorageFull, StorageReadOnly, from_os_error
from vault_agent.indexer.build import Indexer, open_writer_dirs
from vault_agent.indexer.compaction import maybe_compact, overdue
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.scan import scan_vault
from vault_agent.indexer.snapshot import GarbageCollector, atomic_write, now_iso
from vault_agent.indexer.watcher import (
    ObserverHandle,
    VaultEventHandler,
    add_problem_listener,
    remove_problem_listener,
    start_observer,
)
from vault_agent.semantic.embedder import SemanticIndexer

log = logging.getLogger("vault_agent.indexer.engine")

MAX_DEBOUNCE_S = 1.0  # a steady stream of saves still commits at least this often
RECONCILE_INTERVAL_S = 60.0
HASH_PASS_EVERY = 10  # every Nth reconcile also compares content hashes
MISSED_TIME_S = 2.5 * HEARTBEAT_INTERVAL_S  # a heartbeat tick this late: the process was stopped
# A batch this big may be the visible part of an overflow whose record has not arrived yet:
# reconcile by a rescan in the same build rather than report a partial snapshot as fresh.
BIG_BATCH = 1000
GC_INTERVAL_S = 10.0
MIN_BACKOFF_S = 0.5  # a failed build is retried after this, doubling up to MAX_BACKOFF_S
MAX_BACKOFF_S = 30.0
MIN_COMMIT_GAP_S = 1.0  # sustained edits: at most one commit per second (batched)
STORAGE_REASONS = ("storage-full", "storage-read-only")


class Writer:
    """The one writer process's engine (see module doc); thread-safe public methods."""

    def __init__(
        self,
        settings: Settings,
        *,
        watch: bool = True,
        reconcile_interval_s: float = RECONCILE_INTERVAL_S,
    ) -> None:
        self.settings = settings
        self.index_dir = Path(settings.index_dir)
        self.watch = watch
        self.reconcile_interval_s = reconcile_interval_s
        self._lock = WriterLock(self.index_dir)
        self._cond = threading.Condition()
        self._hints: set[str] = set()
        self._dir_hints: set[str] = set()
        self._hint_version = 0
        self._wake = False
        self._stopping = False
        self._stopped = False
        self._phase = "idle"
        self._stale_reason: str | None = None
        self._rescan_needed = False
        self._watcher_ok = True
        self._head = 0
        self._indexer: Indexer | None = None
        self._observer: ObserverHandle | None = None
        self._threads: list[threading.Thread] = []
        self._started_at = now_iso()
        self._gc: GarbageCollector | None = None
        self._next_reconcile = 0.0
        self._reconciles = 0
        self._reconciler: threading.Thread | None = None
        self._next_gc = 0.0
        self._problem_gen = 0
        self._backoff_s = 0.0
        self._last_commit = (0.0, 0.0)  # (monotonic end, seconds taken) of the last build
        # Embeddings follow the lexical commits on their own thread (vault_agent/semantic).
        self._semantic = SemanticIndexer(self.index_dir, wake=self._on_log_change)

    # ----- public state ----------------------------------------------------------------
    @property
    def manifest(self) -> Manifest | None:
        return self._indexer.manifest if self._indexer else None

    @property
    def applied_seq(self) -> int:
        return self._indexer.applied_seq if self._indexer else 0

    @property
    def snapshot_id(self) -> int | None:
        m = self.manifest
        return m.snapshot_id if m else None

    def state(self) -> WriterState:
        return WriterState(
            pid=os.getpid(),
            started_at=self._started_at,
            heartbeat_at=time.time(),
            phase="building" if self._phase == "building" else "idle",
            log_head_seq=max(self._head, self.applied_seq),
            applied_seq=self.applied_seq,
            snapshot_id=self.snapshot_id,
            watcher_ok=self._watcher_ok,
            watching=self.watch,
            stale_reason=self._stale_reason,
        )

    def _publish(self) -> None:
        data = json.dumps(self.state().model_dump(), separators=(",", ":")).encode()
        with contextlib.suppress(OSError):
            atomic_write(self.index_dir / WRITER_STATE_FILE, data, durable=False)

    # ----- lifecycle -------------------------------------------------------------------
    def start(self) -> Manifest | None:
        """Lock, recover, catch up, then watch. Returns the manifest after catch-up.

        Raises:
            IndexBusy: another writer holds the lock.
        """
        self._indexer = open_writer_dirs(self.settings, self._lock)
        try:
            self._gc = GarbageCollector(self.index_dir)
            self._head = self._indexer.log.head_seq()
            if self.watch:
                add_problem_listener(self._on_problem)
                handler = VaultEventHandler(
                    self._indexer.vault, self._indexer.log.dir, self._on_hint, self._on_log_change
                )
                self._observer = start_observer(self._indexer.vault, self._indexer.log.dir, handler)
            self._set_phase("building")
            try:
                self._indexer.catch_up()
            except OSError as exc:
                # Disk full (or gone read-only) at start: serve the last snapshot, stale,
                # and let the loop retry with backoff until space returns.
                if not self._storage_problem(exc, lost_hints=True):
                    raise
            self._head = max(self._head, self._indexer.log.head_seq())
            self._set_phase("idle")
            self._next_reconcile = time.monotonic() + self.reconcile_interval_s
            self._semantic.start()
            self._semantic.sync(self._indexer)
            for target, name in (
                (self._loop, "vault-agent-writer"),
                (self._heartbeat, "vault-agent-heartbeat"),
            ):
                t = threading.Thread(target=target, name=name, daemon=True)
                t.start()
                self._threads.append(t)
        except BaseException:
            self._shutdown_watch()
            self._lock.release()
            raise
        return self.manifest

    def stop(self) -> None:
        """Stop watching and building, join threads, remove writer.json, release the lock.

        Idempotent: a second call does nothing (it must not remove the writer.json of a
        writer that took over meanwhile)."""
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            self._stopping = True
            self._cond.notify_all()
        self._shutdown_watch()
        self._semantic.stop()
        for t in [*self._threads, self._reconciler]:
            if t is not None:
                t.join(timeout=60)
        self._threads = []
        with contextlib.suppress(FileNotFoundError):
            (self.index_dir / WRITER_STATE_FILE).unlink()
        self._lock.release()

    def close(self) -> None:
        """Stop the writer; idempotent (every resource has a `close()`), safe before `start()`."""
        self.stop()  # stop() is already safe to repeat: joins nothing twice, the lock release is idempotent

    def _shutdown_watch(self) -> None:
        if self._observer is not None:
            remove_problem_listener(self._on_problem)
            self._observer.stop()
            self._observer.join(timeout=30)
            self._observer = None

    def __enter__(self) -> Writer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- inputs ----------------------------------------------------------------------
    def _on_hint(self, rel: str, is_dir: bool) -> None:
        with self._cond:
            (self._dir_hints if is_dir else self._hints).add(rel)
            self._hint_version += 1
            self._cond.notify_all()

    def _on_log_change(self) -> None:
        with self._cond:
            self._wake = True
            self._cond.notify_all()

    def _on_problem(self, reason: str) -> None:
        with self._cond:
            self._stale_reason = reason
            self._problem_gen += 1
            self._rescan_needed = True
            self._hint_version += 1
            self._cond.notify_all()
        self._publish()
        log.warning("watcher reported %s; a rescan follows", reason)

    def _storage_problem(self, exc: OSError, *, lost_hints: bool) -> bool:
        """Mark the index stale for a full or read-only state dir; True when it is one.

        `lost_hints`: events could not be recorded, so a full rescan must follow (the
        snapshot is never `fresh` while a change is known to be missing from the log).
        """
        mapped = from_os_error(exc, "state")
        if not isinstance(mapped, (StorageFull, StorageReadOnly)):
            return False
        reason = "storage-full" if isinstance(mapped, StorageFull) else "storage-read-only"
        with self._cond:
            first = self._stale_reason != reason
            self._stale_reason = reason
            self._problem_gen += 1
            if lost_hints:
                self._rescan_needed = True
        if first:
            log.warning("%s: the last snapshot keeps serving; retrying with backoff", mapped.code)
        self._publish()
        return True

    def append(self, items: list[NewEvent]) -> int:
        """Append events (write tools) through the live writer; returns the last seq."""
        assert self._indexer is not None
        try:
            seq = self._indexer.log.append(items)
        except OSError as exc:
            self._storage_problem(exc, lost_hints=True)  # stale until a rescan records it
            raise
        with self._cond:
            self._head = max(self._head, seq)
            self._wake = True
            self._cond.notify_all()
        return seq

    def wait_for_seq(self, seq: int, timeout_s: float) -> int | None:
        """Snapshot id once a committed snapshot has applied_seq >= seq; None on timeout."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self.applied_seq >= seq or self._stopping, timeout=timeout_s)
        return self.snapshot_id if ok and self.applied_seq >= seq else None

    # ----- the writer loop -------------------------------------------------------------
    def _set_phase(self, phase: str) -> None:
        self._phase = phase
        self._publish()

    def _take_hints(self) -> list[NewEvent]:
        with self._cond:
            files, dirs = sorted(self._hints), sorted(self._dir_hints)
            self._hints, self._dir_hints = set(), set()
            rescan = self._rescan_needed
            self._rescan_needed = False
        items = [NewEvent("upsert", p, None, None, None, "watcher") for p in files]
        items += [NewEvent("upsert", p, None, None, None, "watcher") for p in dirs]
        if len(items) >= BIG_BATCH:
            rescan = True
        if rescan:
            items.append(NewEvent("rescan", "", None, None, None, "watcher"))
        return items

    def _flush_hints(self) -> int:
        items = self._take_hints()
        if items:
            assert self._indexer is not None
            try:
                seq = self._indexer.log.append(items)
            except OSError as exc:
                self._storage_problem(exc, lost_hints=True)
                raise
            self._head = max(self._head, seq)
            self._publish()
            return len(items)
        return 0

    def _has_work(self) -> bool:
        return bool(self._hints or self._dir_hints or self._rescan_needed or self._wake)

    def _loop(self) -> None:
        while True:
            with self._cond:
                timeout = max(0.0, self._next_reconcile - time.monotonic())
                self._cond.wait_for(lambda: self._stopping or self._has_work(), timeout=min(timeout, 1.0))
                if self._stopping:
                    return
                self._wake = False
            try:
                self._flush_hints()
                self._debounce()
                if time.monotonic() >= self._next_reconcile:
                    self._start_reconcile()
                self._build()
                self._backoff_s = 0.0
            except Exception as exc:  # noqa: BLE001 - the writer must outlive any one failed build
                if isinstance(exc, OSError):
                    self._storage_problem(exc, lost_hints=False)
                # No traceback: OSError texts carry absolute paths, which logs never show.
                self._backoff_s = min(MAX_BACKOFF_S, max(MIN_BACKOFF_S, self._backoff_s * 2))
                log.error("index build failed (%s); retrying in %.1f s", type(exc).__name__, self._backoff_s)
                self._set_phase("idle")
                with self._cond:
                    self._cond.wait_for(lambda: self._stopping, timeout=self._backoff_s)

    def _debounce(self) -> None:
        quiet = self.settings.debounce_ms / 1000.0
        deadline = time.monotonic() + MAX_DEBOUNCE_S
        while True:
            with self._cond:
                version = self._hint_version
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping:
                    break
                self._cond.wait_for(
                    lambda: self._hint_version != version or self._stopping,  # noqa: B023 - waited on in this iteration
                    timeout=min(quiet, remaining),
                )
                changed = self._hint_version != version
            if not changed:
                break
            self._flush_hints()
        self._flush_hints()

    def _start_reconcile(self) -> None:
        """Run the periodic scan on its own thread, so a walk of a big vault never delays a
        save's commit; its events are hints checked against the disk like any other."""
        self._next_reconcile = time.monotonic() + self.reconcile_interval_s
        if self._reconciler is not None and self._reconciler.is_alive():
            return
        self._reconciles += 1
        self._reconciler = threading.Thread(target=self._reconcile, name="vault-agent-reconcile", daemon=True)
        self._reconciler.start()

    def _reconcile(self) -> None:
        """Periodic safety net: stat scan (sometimes with hashes) → events for differences."""
        assert self._indexer is not None
        idx = self._indexer
        try:
            known = idx.notes.copy()  # atomic under the GIL; the loop thread updates notes in place
            scan = scan_vault(idx.vault, known, hash_pass=self._reconciles % HASH_PASS_EVERY == 0)
            if scan.events:
                seq = idx.log.append(scan.events)
                with self._cond:
                    self._head = max(self._head, seq)
                self._on_log_change()
        except OSError as exc:
            log.error("reconcile scan failed (%s)", type(exc).__name__)
        if self._observer is not None and not self._observer.is_alive():
            with self._cond:
                self._watcher_ok = False
                self._stale_reason = "watch-error"
                self._problem_gen += 1

    def _build(self) -> None:
        assert self._indexer is not None
        idx = self._indexer
        events = idx.log.read_after(idx.applied_seq)
        self._head = max(self._head, events[-1].seq if events else idx.log.head_seq())
        if not events:
            self._maintain()
            return
        self._pace_commits()
        events = idx.log.read_after(idx.applied_seq)
        self._head = max(self._head, events[-1].seq)
        with self._cond:
            gen_at_start = self._problem_gen
            # Stale ends only with a full rescan logged after the latest problem.
            resolves = any(e.op == "rescan" and e.path == "" for e in events) and not self._rescan_needed
        self._set_phase("building")
        ok = False
        started = time.monotonic()
        try:
            idx.apply(events)
            ok = True
            self._last_commit = (time.monotonic(), time.monotonic() - started)
        finally:
            with self._cond:
                watching_ok = self._observer is None or self._observer.is_alive()
                if ok and resolves and self._problem_gen == gen_at_start and watching_ok:
                    self._stale_reason = None
                    self._watcher_ok = True
                elif ok and self._stale_reason in STORAGE_REASONS and not self._rescan_needed:
                    # Every logged event is now applied and none was lost (a lost one would
                    # have queued a rescan): the storage problem is over.
                    self._stale_reason = None
                self._cond.notify_all()
            self._set_phase("idle")
        self._maintain()

    def _pace_commits(self) -> None:
        """Under a steady stream of edits, commit at most every MIN_COMMIT_GAP_S (and never
        spend more than half the time committing): edits arriving meanwhile join the next
        batch, so readers see a bounded number of new snapshots per second however fast
        the editor saves. An edit after a quiet moment still commits at once."""
        done_at, took = self._last_commit
        gap = max(MIN_COMMIT_GAP_S, took)
        with self._cond:
            self._cond.wait_for(lambda: self._stopping, timeout=max(0.0, done_at + gap - time.monotonic()))
        self._flush_hints()  # what arrived while waiting joins this commit

    def _maintain(self) -> None:
        """While no change waits: compact small segments; GC at most every GC_INTERVAL_S."""
        assert self._indexer is not None
        with self._cond:
            busy = bool(self._hints or self._dir_hints or self._rescan_needed)
        manifest = self._indexer.manifest
        if busy and not (manifest is not None and overdue(manifest)):
            return  # compaction waits for a quiet moment unless segments pile up
        if maybe_compact(self._indexer) is not None:
            with self._cond:
                self._cond.notify_all()
            self._publish()
        if self._semantic.sync(self._indexer) is not None:
            with self._cond:
                self._cond.notify_all()
            self._publish()
        now = time.monotonic()
        if self._gc is not None and now >= self._next_gc:
            self._next_gc = now + GC_INTERVAL_S
            self._gc.collect()

    def _heartbeat(self) -> None:
        last = time.monotonic()
        while True:
            with self._cond:
                if self._cond.wait_for(lambda: self._stopping, timeout=HEARTBEAT_INTERVAL_S):
                    return
            now = time.monotonic()
            if now - last > MISSED_TIME_S:
                # The process did not run for a while (SIGSTOP, suspend): events may have been
                # lost without an overflow record reaching us yet. Stale until a rescan.
                self._on_problem("missed-time")
            last = now
            assert self._indexer is not None
            head = self._indexer.log.head_seq()
            if head > max(self._head, self.applied_seq):
                self._on_log_change()  # another process appended (write tools without a writer)
            self._head = max(self._head, head)
            self._publish()
