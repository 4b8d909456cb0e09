"""The writer's thread: every batch of hints into the event log, each settled one committed.

Each batch of watcher hints (watch_batches.py, filtered by watch_filter.py) is appended to
the event log as it comes (one fsync, `record`), and so are the changes of write tools
(`append`, committed without the watcher's quiet period; their echo from the watcher is
recognised and not logged again, tool_echo.py). When a burst settles, every event after
applied_seq is applied and committed, paced by `CommitPacer` (`commit`). Small segments
are compacted and garbage collected, and finished embeddings committed, while no change
waits (`maintain`). A failed attempt goes to `WriterFaults.build_failed` (a backoff) and
the loop goes on. `engine.Writer` starts it on a supervised thread.
"""

from __future__ import annotations

import dataclasses
import time

from vault_agent.config import Settings
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.compaction import due_while_busy
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.pacing import CommitPacer
from vault_agent.indexer.reconcile import Reconciler
from vault_agent.indexer.snapshot import GarbageCollector
from vault_agent.indexer.staleness import Staleness
from vault_agent.indexer.tool_echo import ToolEchoes
from vault_agent.indexer.watch_batches import Batch, HintBatcher
from vault_agent.indexer.writer_faults import WriterFaults
from vault_agent.indexer.writer_status import WriterProgress, WriterStatus
from vault_agent.semantic.embedder import SemanticIndexer

MAX_DEBOUNCE_S = 1.0  # a steady stream of saves still commits at least this often
IDLE_WAKE_S = 1.0  # an idle writer still looks for maintenance work this often


class CommitLoop:
    """Batches into commits on the writer thread (see module doc); `append` from any thread."""

    def __init__(
        self,
        settings: Settings,
        progress: WriterProgress,
        batcher: HintBatcher,
        staleness: Staleness,
        faults: WriterFaults,
        semantic: SemanticIndexer,
        status: WriterStatus,
    ) -> None:
        self.settings = settings
        self._progress = progress
        self._batcher = batcher
        self._staleness = staleness
        self._faults = faults
        self._semantic = semantic
        self._status = status
        self._pacer = CommitPacer()
        self.reconciler: Reconciler | None = None  # the writer's (it makes one per index)
        self._gc: GarbageCollector | None = None
        self._echoes: ToolEchoes | None = None

    def begin(self, idx: Indexer) -> None:
        """Ready for the index `idx` the writer opened: its GC, the echoes of write tools."""
        self._gc = GarbageCollector(idx.index_dir)
        self._echoes = ToolEchoes(idx.vault)

    def _idle_s(self) -> float:
        assert self.reconciler is not None
        return min(self.reconciler.seconds_to_next(), IDLE_WAKE_S)

    def run(self) -> None:
        """The writer thread: record every batch, commit each settled one; a failure is
        logged (scrubbed traceback) and retried with backoff until it goes away."""
        quiet_s = self.settings.debounce_ms / 1000.0
        while not self._batcher.stopped:
            try:
                for batch in self._batcher.batches(quiet_s, MAX_DEBOUNCE_S, self._idle_s):
                    if self._faults.state_lost:
                        self._faults.recover_state_dir()
                    self.record(batch)
                    if batch.settled:
                        assert self.reconciler is not None
                        self.reconciler.start_if_due()
                        self.commit()
                        self._faults.build_succeeded()
                return
            except Exception as exc:  # noqa: BLE001 - the writer must outlive any one failed build
                self._faults.build_failed(exc)  # why, then a backoff before the next attempt

    def append(self, items: list[NewEvent]) -> int:
        """Append events of a write tool to the event log; returns the last seq.

        The change is complete on disk, so it is committed without the watcher's quiet
        period; the watcher's echo of it is recognised and not logged again (tool_echo.py).
        """
        idx = self._progress.indexer
        assert idx is not None and self._echoes is not None
        self._echoes.expect([p for e in items for p in (e.path, e.dest) if p])
        try:
            seq = idx.log.append(items)
        except OSError as exc:
            self._faults.storage_problem(exc, lost_hints=True)  # stale until a rescan records it
            raise
        self._progress.saw(seq)
        self._batcher.expedite()
        return seq

    def record(self, batch: Batch) -> None:
        """Append a batch's hints to the event log (one write, one fsync); the echoes of
        changes a write tool logged itself are left out."""
        if self._echoes is not None and batch.files:
            files = tuple(p for p in batch.files if not self._echoes.redundant(p))
            batch = dataclasses.replace(batch, files=files)
        items = batch.events()
        if not items:
            return
        assert self._progress.indexer is not None
        try:
            seq = self._progress.indexer.log.append(items)
        except OSError as exc:
            self._faults.storage_problem(exc, lost_hints=True)
            raise
        self._progress.saw(seq)
        self._status.publish()

    def commit(self) -> None:
        """Apply every logged event after applied_seq as one commit (paced), then maintain."""
        assert self._progress.indexer is not None
        idx, progress = self._progress.indexer, self._progress
        events = idx.log.read_after(idx.applied_seq)
        progress.head = max(progress.head, events[-1].seq if events else idx.log.head_seq())
        if self._faults.holding_back():
            return  # the events wait in the log (writer_faults.py)
        if not events:
            self.maintain()
            return
        self._batcher.wait_stopped(self._pacer.delay_s())
        self.record(self._batcher.take())  # what arrived while waiting joins this commit
        events = idx.log.read_after(idx.applied_seq)
        progress.head = max(progress.head, events[-1].seq)
        generation = self._staleness.generation
        # Stale ends only with a full rescan logged after the latest problem.
        resolves = (
            any(e.op == "rescan" and e.path == "" for e in events) and not self._batcher.rescan_pending()
        )
        self._status.set_phase("building")
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
                    watching=self._faults.watcher_alive(),
                    lost=self._batcher.rescan_pending(),
                )
            progress.committed()
            self._status.set_phase("idle")
        self.maintain()

    def maintain(self) -> None:
        """Compact and sync embeddings while no change waits (or when compaction is overdue);
        collect garbage (at most every GC_INTERVAL_S) even under a steady stream of edits."""
        idx = self._progress.indexer
        assert idx is not None
        manifest = idx.manifest
        quiet = not self._batcher.pending()
        if quiet or (manifest is not None and due_while_busy(manifest)):
            for changed in (idx.compact(), self._semantic.sync(idx)):
                if changed is not None:
                    self._progress.committed()
                    self._status.publish()
        if self._gc is not None:
            self._gc.collect_if_due()
