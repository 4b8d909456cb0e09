"""The long-running single writer: turns batches of change hints into commits.

`Writer(settings).start()` takes the lock (IndexBusy if held), recovers the event log,
clears tmp/, runs a catch-up scan + build, then keeps the index fresh on its writer
thread (`CommitLoop`, commit_loop.py: hints into the event log as they come, a commit when
a burst settles, paced; compaction and GC while idle). The other jobs live in their own
classes, which the writer composes: how far it got and `writer.json` (`WriterProgress`,
`WriterStatus`), stale state (`Staleness`), the periodic reconcile scan (`Reconciler`),
`writer.json`'s heartbeat (`Heartbeat`), embeddings (`SemanticIndexer`: a niced worker
process following the commits, one of the writer's commit hooks: commit_hook.py), the
watcher and the vault folder it watches (`WatchKeeper`), and what is done on each fault
(`WriterFaults`, writer_faults.py).
The heartbeat, the writer thread and the embedder run under a `Supervisor`: an exception
restarts them after a backoff, and `writer.json` publishes the restarts. Each heartbeat
also checks that the vault folder is the watched one (a vanished folder makes the index
`stale`, `vault-missing`, and nothing is committed until it is back and rescanned) and that
the lock file still exists (a deleted state dir is recreated, the lock re-taken, and the
index rebuilt, while `index` beside it answers INDEX_BUSY: lock.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from vault_agent.commit_hook import CommitHook
from vault_agent.config import Settings
from vault_agent.contracts import ComponentHealth, Manifest, WriterState
from vault_agent.indexer.build import Indexer, open_writer_dirs
from vault_agent.indexer.commit_loop import CommitLoop
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.heartbeat import Heartbeat
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.long_run import end_settled, settle_for_saves
from vault_agent.indexer.reconcile import RECONCILE_INTERVAL_S, Reconciler
from vault_agent.indexer.staleness import Staleness
from vault_agent.indexer.watch_batches import HintBatcher
from vault_agent.indexer.watch_filter import NoteFilter
from vault_agent.indexer.watch_keeper import WatchKeeper
from vault_agent.indexer.watcher import VaultEventHandler, add_problem_listener, remove_problem_listener
from vault_agent.indexer.writer_faults import WriterFaults, WriterLink
from vault_agent.indexer.writer_status import WriterProgress, WriterStatus
from vault_agent.semantic.embedder import SemanticIndexer
from vault_agent.supervise import Supervisor

log = logging.getLogger("vault_agent.indexer.engine")

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
        self._keeper: WatchKeeper | None = None
        self._thread: threading.Thread | None = None
        self._batcher = HintBatcher()
        self._staleness = Staleness()
        self._progress = WriterProgress()
        self._supervisor = Supervisor(on_failure=lambda _name: self._status.publish())
        self._status = WriterStatus(self.index_dir, watch, self._progress, self._staleness, self._components)
        self._heartbeat = Heartbeat(self._on_heartbeat, spawn=self._supervisor.spawn)
        self._semantic = SemanticIndexer(
            self.index_dir, wake=self._batcher.wake, spawn=self._supervisor.spawn
        )
        # every commit sets the embedder's target and carries its files (after the given hooks)
        self._hooks = (*hooks, self._semantic)
        link = WriterLink(self._progress, self._status, keeper=lambda: self._keeper, adopt=self._adopt)
        self._faults = WriterFaults(
            settings, self._lock, self._staleness, self._batcher, self._semantic, link
        )
        self._loop = CommitLoop(
            settings,
            self._progress,
            self._batcher,
            self._staleness,
            self._faults,
            self._semantic,
            self._status,
        )

    # ----- public state ----------------------------------------------------------------
    @property
    def manifest(self) -> Manifest | None:
        return self._progress.manifest

    @property
    def applied_seq(self) -> int:
        return self._progress.applied_seq

    @property
    def snapshot_id(self) -> int | None:
        m = self.manifest
        return m.snapshot_id if m else None

    def state(self) -> WriterState:
        """What `writer.json` says now."""
        return self._status.state()

    def _components(self) -> dict[str, ComponentHealth]:
        return {name: ComponentHealth(**vars(h)) for name, h in self._supervisor.report().items()}

    # ----- lifecycle -------------------------------------------------------------------
    def start(self) -> Manifest | None:
        """Lock, recover, catch up, then watch. Returns the manifest after catch-up.

        Raises:
            IndexBusy: another writer holds the lock.
        """
        self._progress.indexer = idx = open_writer_dirs(self.settings, self._lock, self._hooks)
        try:
            self._loop.begin(idx)
            self._progress.saw(idx.log.head_seq())
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
            self._status.set_phase("building")
            try:
                idx.catch_up()
            except OSError as exc:
                # Disk full (or gone read-only) at start: serve the last snapshot, stale,
                # and let the loop retry with backoff until space returns.
                if not self._faults.storage_problem(exc, lost_hints=True):
                    raise
            self._progress.saw(idx.log.head_seq())
            settle_for_saves()  # long_run.py: parser warm, start-up heap out of the GC's way
            self._status.set_phase("idle")
            self._loop.reconciler = self._new_reconciler(idx)
            self._semantic.start()
            self._semantic.sync(idx)
            self._thread = self._supervisor.spawn("writer", self._loop.run)
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
        if not self._progress.stop():
            return
        self._batcher.stop()
        self._supervisor.stop()
        self._shutdown_watch()
        self._semantic.stop()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._heartbeat.stop()
        if self._loop.reconciler is not None:
            self._loop.reconciler.join()
        self._status.remove()
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
        idx = self._progress.indexer
        assert idx is not None
        return VaultEventHandler(NoteFilter(idx.vault), idx.log.dir, self._batcher.add, self._batcher.wake)

    def _new_reconciler(self, idx: Indexer) -> Reconciler:
        return Reconciler(
            idx,
            self.reconcile_interval_s,
            on_appended=self._on_appended,
            watcher_alive=self._faults.watcher_alive,
            on_watcher_dead=self._staleness.watcher_died,
            wait_writer_idle=self._progress.wait_committed,
        )

    def _adopt(self, idx: Indexer) -> None:
        """The new index over a recreated state dir: its reconciler, a watch of its event folder."""
        self._progress.indexer = idx
        self._loop.reconciler = self._new_reconciler(idx)
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
        self._progress.saw(seq)
        self._batcher.wake()

    def _on_heartbeat(self, missed_time: bool) -> None:
        self._faults.on_heartbeat(missed_time)  # missed time, the lock file, the vault folder
        idx = self._progress.indexer
        assert idx is not None
        head = idx.log.head_seq()
        if head > max(self._progress.head, self.applied_seq):
            self._batcher.wake()  # another process appended (write tools without a writer)
        self._progress.saw(head)
        self._status.publish()
        self._semantic.publish_state()  # embedder.json: its heartbeat says embeddings are being computed

    def append(self, items: list[NewEvent]) -> int:
        """Append events (write tools) through the live writer; returns the last seq
        (committed without the watcher's quiet period: `CommitLoop.append`)."""
        return self._loop.append(items)

    def wait_for_seq(self, seq: int, timeout_s: float) -> int | None:
        """Snapshot id once a committed snapshot has applied_seq >= seq; None on timeout."""
        return self._progress.wait_for_seq(seq, timeout_s)
