"""The long-running single writer: turns batches of change hints into commits.

`Writer(settings).start()` takes the lock (IndexBusy if held), recovers the event log,
clears tmp/, runs a catch-up scan + build, then keeps the index fresh: each batch of
watcher hints (watch_batches.py, filtered by watch_filter.py) is appended to the event log
as it comes (one fsync), and when a burst settles every event after applied_seq is applied
and committed, paced by `CommitPacer`. Small segments are compacted and garbage collected
while idle. The other jobs live in their own classes, which the writer composes: stale
state (`Staleness`), the periodic reconcile scan (`Reconciler`), `writer.json`'s heartbeat
(`Heartbeat`), retries (`Backoff`), GC (`GarbageCollector`), embeddings
(`SemanticIndexer`: a niced worker process following the commits, one of the writer's
commit hooks: commit_hook.py), the watcher and the vault folder it watches
(`WatchKeeper`), and what is done on each fault (`WriterFaults`, writer_faults.py).
The heartbeat, the build loop and the embedder run under a `Supervisor`: an exception
restarts them after a backoff, and `writer.json` publishes the restarts. Each heartbeat
also checks that the vault folder is the watched one (a vanished folder makes the index
`stale`, `vault-missing`, and nothing is committed until it is back and rescanned) and that
the lock file still exists (a deleted state dir is recreated, the lock re-taken, and the
index rebuilt, while `index` beside it answers INDEX_BUSY: lock.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from vault_agent.commit_hook import CommitHook
from vault_agent.config import Settings
from vault_agent.contracts import WRITER_STATE_FILE, ComponentHealth, Manifest, WriterState
from vault_agent.indexer.build import Indexer, open_writer_dirs
from vault_agent.indexer.compaction import due_while_busy
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.heartbeat import Heartbeat
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.long_run import end_settled, settle_for_saves
from vault_agent.indexer.pacing import Backoff, CommitPacer
from vault_agent.indexer.reconcile import RECONCILE_INTERVAL_S, Reconciler
from vault_agent.indexer.snapshot import GarbageCollector, atomic_write, now_iso
from vault_agent.indexer.staleness import Staleness
from vault_agent.indexer.tool_echo import ToolEchoes
from vault_agent.indexer.watch_batches import Batch, HintBatcher
from vault_agent.indexer.watch_filter import NoteFilter
from vault_agent.indexer.watch_keeper import WatchKeeper
from vault_agent.indexer.watcher import VaultEventHandler, add_problem_listener, remove_problem_listener
from vault_agent.indexer.writer_faults import WriterFaults, WriterLink
from vault_agent.semantic.embedder import SemanticIndexer
from vault_agent.supervise import Supervisor

log = logging.getLogger("vault_agent.indexer.engine")

MAX_DEBOUNCE_S = 1.0  # a steady stream of saves still commits at least this often
IDLE_WAKE_S = 1.0  # an idle writer still looks for maintenance work this often

__all__ = ["Writer"]


class Writer:
    """The one writer process's engine (see module doc); thread-safe public methods."""

    def __init__(
        self,
        settings: Settings,
        *,
        watch: bool = True,
        reconcile_interval_s: float = RECONCILE_INTERVAL_S,
        hooks: Sequence[CommitHook] = (),
    ) -> None:
        self.settings = settings
        self.index_dir = Path(settings.index_dir)
        self.watch = watch
        self.reconcile_interval_s = reconcile_interval_s
        self._lock = WriterLock(self.index_dir)
        self._cond = threading.Condition()  # notified on every commit and on stop
        self._stopped = False
        self._phase = "idle"
        self._head = 0
        self._started_at = now_iso()
        self._indexer: Indexer | None = None
        self._keeper: WatchKeeper | None = None
        self._loop: threading.Thread | None = None
        self._batcher = HintBatcher()
        self._staleness = Staleness()
        self._pacer = CommitPacer()
        self._backoff = Backoff()
        self._supervisor = Supervisor(on_failure=lambda _name: self._publish())
        self._heartbeat = Heartbeat(self._on_heartbeat, spawn=self._supervisor.spawn)
        self._reconciler: Reconciler | None = None
        self._gc: GarbageCollector | None = None
        self._echoes: ToolEchoes | None = None
        self._semantic = SemanticIndexer(
            self.index_dir, wake=self._batcher.wake, spawn=self._supervisor.spawn
        )
        # every commit sets the embedder's target and carries its files (after the given hooks)
        self._hooks = (*hooks, self._semantic)
        self._faults = WriterFaults(
            settings, self._lock, self._staleness, self._batcher, self._semantic, self._link()
        )

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
            watcher_ok=self._staleness.watcher_ok,
            watching=self.watch,
            stale_reason=self._staleness.reason,
            components={name: ComponentHealth(**vars(h)) for name, h in self._supervisor.report().items()},
        )

    def _publish(self) -> None:
        data = json.dumps(self.state().model_dump(), separators=(",", ":")).encode()
        with contextlib.suppress(OSError):
            atomic_write(self.index_dir / WRITER_STATE_FILE, data, durable=False)

    def _set_phase(self, phase: str) -> None:
        self._phase = phase
        self._publish()

    # ----- lifecycle -------------------------------------------------------------------
    def start(self) -> Manifest | None:
        """Lock, recover, catch up, then watch. Returns the manifest after catch-up.

        Raises:
            IndexBusy: another writer holds the lock.
        """
        self._indexer = idx = open_writer_dirs(self.settings, self._lock, self._hooks)
        try:
            self._gc = GarbageCollector(self.index_dir)
            self._echoes = ToolEchoes(idx.vault)
            self._head = idx.log.head_seq()
            if self.watch:
                add_problem_listener(self._faults.on_problem)
                self._keeper = WatchKeeper(
                    idx.vault,
                    idx.log.dir,
                    self._event_handler,
                    self._supervisor,
                    self.settings.index_dir_in_vault(),
                )
                self._keeper.start()
            self._set_phase("building")
            try:
                idx.catch_up()
            except OSError as exc:
                # Disk full (or gone read-only) at start: serve the last snapshot, stale,
                # and let the loop retry with backoff until space returns.
                if not self._faults.storage_problem(exc, lost_hints=True):
                    raise
            self._head = max(self._head, idx.log.head_seq())
            settle_for_saves()  # long_run.py: parser warm, start-up heap out of the GC's way
            self._set_phase("idle")
            self._reconciler = self._new_reconciler(idx)
            self._semantic.start()
            self._semantic.sync(idx)
            self._loop = self._supervisor.spawn("writer", self._run)
            self._heartbeat.start()
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
            self._cond.notify_all()
        self._batcher.stop()
        self._supervisor.stop()
        self._shutdown_watch()
        self._semantic.stop()
        if self._loop is not None:
            self._loop.join(timeout=60)
        self._heartbeat.stop()
        if self._reconciler is not None:
            self._reconciler.join()
        with contextlib.suppress(FileNotFoundError):
            (self.index_dir / WRITER_STATE_FILE).unlink()
        self._lock.release()
        end_settled()

    def close(self) -> None:
        """Stop the writer; idempotent (every resource has a `close()`), safe before `start()`."""
        self.stop()

    def _shutdown_watch(self) -> None:
        if self._keeper is not None:
            remove_problem_listener(self._faults.on_problem)
            self._keeper.stop()
            self._keeper = None

    def _event_handler(self) -> VaultEventHandler:
        """The watchdog handler of a (re)started observer: hints into the batcher."""
        assert self._indexer is not None
        idx = self._indexer
        return VaultEventHandler(NoteFilter(idx.vault), idx.log.dir, self._batcher.add, self._batcher.wake)

    def _new_reconciler(self, idx: Indexer) -> Reconciler:
        return Reconciler(
            idx,
            self.reconcile_interval_s,
            on_appended=self._on_appended,
            watcher_alive=self._watcher_alive,
            on_watcher_dead=self._staleness.watcher_died,
            wait_writer_idle=self._wait_committed,
        )

    def _link(self) -> WriterLink:
        """What the fault handling sees of this writer (writer_faults.py)."""
        return WriterLink(
            indexer=lambda: self._indexer,
            keeper=lambda: self._keeper,
            head=lambda: self._head,
            saw_head=self._saw_head,
            publish=self._publish,
            set_phase=self._set_phase,
            adopt=self._adopt,
            committed=self._wake_waiters,
        )

    def _adopt(self, idx: Indexer) -> None:
        """The new index over a recreated state dir: its reconciler, a watch of its event folder."""
        self._indexer = idx
        self._reconciler = self._new_reconciler(idx)
        if self._keeper is not None:
            self._keeper.restart("index folder recreated")  # its event folder was watched

    def __enter__(self) -> Writer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- inputs ----------------------------------------------------------------------
    def _on_hint(self, rel: str, is_dir: bool) -> None:
        """A path hint as the watcher would give it (tests feed hints without a watcher)."""
        self._batcher.add(rel, is_dir)

    def _on_appended(self, seq: int) -> None:
        self._saw_head(seq)
        self._batcher.wake()

    def _saw_head(self, seq: int) -> None:
        self._head = max(self._head, seq)

    def _wake_waiters(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _wait_committed(self, timeout_s: float) -> None:
        """Block while a logged change waits for its commit (at most `timeout_s`)."""
        with self._cond:
            self._cond.wait_for(lambda: self._stopped or self._head <= self.applied_seq, timeout=timeout_s)

    def _watcher_alive(self) -> bool:
        return self._faults.watcher_alive()

    def _on_heartbeat(self, missed_time: bool) -> None:
        self._faults.on_heartbeat(missed_time)  # missed time, the lock file, the vault folder
        assert self._indexer is not None
        head = self._indexer.log.head_seq()
        if head > max(self._head, self.applied_seq):
            self._batcher.wake()  # another process appended (write tools without a writer)
        self._head = max(self._head, head)
        self._publish()
        self._semantic.publish_state()  # embedder.json: its heartbeat says embeddings are being computed

    def append(self, items: list[NewEvent]) -> int:
        """Append events (write tools) through the live writer; returns the last seq.

        The change is complete on disk, so it is committed without the watcher's quiet
        period; the watcher's echo of it is recognised and not logged again (tool_echo.py).
        """
        assert self._indexer is not None and self._echoes is not None
        self._echoes.expect([p for e in items for p in (e.path, e.dest) if p])
        try:
            seq = self._indexer.log.append(items)
        except OSError as exc:
            self._faults.storage_problem(exc, lost_hints=True)  # stale until a rescan records it
            raise
        self._head = max(self._head, seq)
        self._batcher.expedite()
        return seq

    def wait_for_seq(self, seq: int, timeout_s: float) -> int | None:
        """Snapshot id once a committed snapshot has applied_seq >= seq; None on timeout."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self.applied_seq >= seq or self._stopped, timeout=timeout_s)
        return self.snapshot_id if ok and self.applied_seq >= seq else None

    # ----- batches into commits ---------------------------------------------------------
    def _idle_s(self) -> float:
        assert self._reconciler is not None
        return min(self._reconciler.seconds_to_next(), IDLE_WAKE_S)

    def _run(self) -> None:
        """The writer thread: record every batch, commit each settled one; a failure is
        logged (scrubbed traceback) and retried with backoff until it goes away."""
        quiet_s = self.settings.debounce_ms / 1000.0
        while not self._batcher.stopped:
            try:
                for batch in self._batcher.batches(quiet_s, MAX_DEBOUNCE_S, self._idle_s):
                    if self._faults.state_lost:
                        self._faults.recover_state_dir()
                    self._record(batch)
                    if batch.settled:
                        assert self._reconciler is not None
                        self._reconciler.start_if_due()
                        self._commit()
                        self._backoff.succeeded()
                return
            except Exception as exc:  # noqa: BLE001 - the writer must outlive any one failed build
                self._faults.build_failed(exc, self._backoff.failed())  # why, then the backoff

    def _record(self, batch: Batch) -> None:
        """Append a batch's hints to the event log (one write, one fsync); the echoes of
        changes a write tool logged itself are left out."""
        if self._echoes is not None and batch.files:
            files = tuple(p for p in batch.files if not self._echoes.redundant(p))
            batch = dataclasses.replace(batch, files=files)
        items = batch.events()
        if not items:
            return
        assert self._indexer is not None
        try:
            seq = self._indexer.log.append(items)
        except OSError as exc:
            self._faults.storage_problem(exc, lost_hints=True)
            raise
        self._head = max(self._head, seq)
        self._publish()

    def _commit(self) -> None:
        """Apply every logged event after applied_seq as one commit (paced), then maintain."""
        assert self._indexer is not None
        idx = self._indexer
        events = idx.log.read_after(idx.applied_seq)
        self._head = max(self._head, events[-1].seq if events else idx.log.head_seq())
        if (self._keeper is not None and self._keeper.missing) or not self._lock.intact():
            # The events wait in the log: the disk decides once the folder is back, and only
            # the holder of the state dir's lock file commits into it (writer_faults.py).
            return
        if not events:
            self._maintain()
            return
        self._batcher.wait_stopped(self._pacer.delay_s())
        self._record(self._batcher.take())  # what arrived while waiting joins this commit
        events = idx.log.read_after(idx.applied_seq)
        self._head = max(self._head, events[-1].seq)
        generation = self._staleness.generation
        # Stale ends only with a full rescan logged after the latest problem.
        resolves = (
            any(e.op == "rescan" and e.path == "" for e in events) and not self._batcher.rescan_pending()
        )
        self._set_phase("building")
        ok = False
        started = time.monotonic()
        try:
            idx.apply(events)
            ok = True
            self._pacer.committed(started, time.monotonic())
        finally:
            if ok:
                self._staleness.after_commit(
                    generation,
                    resolves=resolves,
                    watching=self._watcher_alive(),
                    lost=self._batcher.rescan_pending(),
                )
            with self._cond:
                self._cond.notify_all()
            self._set_phase("idle")
        self._maintain()

    def _maintain(self) -> None:
        """Compact and sync embeddings while no change waits (or when compaction is overdue);
        collect garbage (at most every GC_INTERVAL_S) even under a steady stream of edits."""
        assert self._indexer is not None
        manifest = self._indexer.manifest
        quiet = not self._batcher.pending()
        if quiet or (manifest is not None and due_while_busy(manifest)):
            for changed in (self._indexer.compact(), self._semantic.sync(self._indexer)):
                if changed is not None:
                    with self._cond:
                        self._cond.notify_all()
                    self._publish()
        if self._gc is not None:
            self._gc.collect_if_due()
