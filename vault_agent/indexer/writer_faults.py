"""What the writer does when its world breaks: watcher problems, a full or read-only state
dir, the vault folder vanishing or replaced, the state dir deleted under it, a failed build.

`WriterFaults` is held by the engine's `Writer` (engine.py), kept apart so that what
happens on each fault reads in one place. It is given the parts it acts on (the lock, the
stale state, the batcher, the embedder) and sees the rest of the writer through
`WriterLink`: its progress and status (writer_status.py), its watch, and how to give it a
new index.
- Watcher overflow or error, missed time: stale until a full rescan commits (staleness.py).
- Disk full / read-only state dir: stale, the build loop retries with backoff.
- Vault folder gone (a heartbeat's `WatchKeeper.check`, or a build that met
  `VaultUnavailable`): stale `vault-missing`, nothing committed, no traceback; once it is
  back (or another folder took its path) a new observer watches it and a rescan must
  commit before `fresh`.
- State dir deleted (the lock file lost its name): the lock is re-taken on a new file at
  once (lock.py: `index` beside it meanwhile answers INDEX_BUSY), then the build loop opens
  a new index there and rebuilds it from a full scan (state_dir.py); readers answer
  INDEX_NOT_FOUND "the index folder was deleted; ... rebuilding" until it commits.
- Any other failed build: logged with its scrubbed traceback, retried after a backoff.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from vault_agent.config import Settings
from vault_agent.errors import IndexBusy, StorageFull, StorageReadOnly, VaultUnavailable, from_os_error
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.failure import describe_failure
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.pacing import Backoff
from vault_agent.indexer.staleness import Staleness
from vault_agent.indexer.state_dir import reopen_indexer
from vault_agent.indexer.watch_batches import HintBatcher
from vault_agent.indexer.watch_keeper import WatchKeeper
from vault_agent.indexer.writer_status import WriterProgress, WriterStatus
from vault_agent.semantic.embedder import SemanticIndexer

log = logging.getLogger("vault_agent.indexer.engine")


@dataclass(frozen=True)
class WriterLink:
    """What the fault handling sees of the writer, read when it acts (both change)."""

    progress: WriterProgress  # its index, the log head it has seen, who waits for a commit
    status: WriterStatus  # writer.json, the phase
    keeper: Callable[[], WatchKeeper | None]  # its watch now, None without one
    adopt: Callable[[Indexer], None]  # a new index (over a recreated state dir) becomes the writer's


class WriterFaults:
    """The writer's fault handling (see module doc); thread-safe where the writer's threads meet."""

    def __init__(
        self,
        settings: Settings,
        lock: WriterLock,
        staleness: Staleness,
        batcher: HintBatcher,
        semantic: SemanticIndexer,
        writer: WriterLink,
    ) -> None:
        self._settings = settings
        self._lock = lock
        self._staleness = staleness
        self._batcher = batcher
        self._semantic = semantic
        self._writer = writer
        self._backoff = Backoff()  # between failed build attempts
        self._state_guard = threading.Lock()  # one recreation of a deleted state dir at a time
        self._state_in_vault = settings.index_dir_in_vault() is not None
        self.state_lost = False  # set by whoever re-took the lock; the build loop rebuilds

    def watcher_alive(self) -> bool:
        keeper = self._writer.keeper()
        return keeper is None or keeper.healthy()

    def holding_back(self) -> bool:
        """Logged events wait in the log: the disk decides once the vault folder is back, and
        only the holder of the state dir's lock file commits into it."""
        keeper = self._writer.keeper()
        return (keeper is not None and keeper.missing) or not self._lock.intact()

    def on_problem(self, reason: str) -> None:
        """The watcher reported a problem (overflow, error) or time was missed."""
        self._staleness.report(reason)
        self._batcher.request_rescan()
        self._writer.status.publish()
        log.warning("watcher reported %s; a rescan follows", reason)

    def on_heartbeat(self, missed_time: bool) -> None:
        """A heartbeat's checks: missed time, the lock file's name, the vault folder."""
        if missed_time:
            # The process did not run for a while: events may have been lost without an
            # overflow record reaching us yet. Stale until a rescan.
            self.on_problem("missed-time")
        if not self._lock.intact():
            self.state_dir_deleted()
        keeper = self._writer.keeper()
        if keeper is not None:
            self._check_vault_root(keeper)

    def _check_vault_root(self, keeper: WatchKeeper) -> None:
        """Heartbeat: is the watched folder still the vault folder? (watch_keeper.py)"""
        state = keeper.check()
        if state == "vanished":
            self.vault_missing()
        elif state == "reattached":
            # Back, replaced, or the observer had died: what changed meanwhile was not seen.
            self._staleness.report("rescan")
            self._batcher.request_rescan()
            self._writer.status.publish()

    def vault_missing(self) -> None:
        """The vault folder is gone: stale, and nothing is committed until it is back."""
        keeper = self._writer.keeper()
        if keeper is not None:
            keeper.saw_missing()
        if self._staleness.report("vault-missing"):
            log.warning(
                "the vault folder is missing (moved, deleted or unmounted); serving the last "
                "snapshot as stale until it is back",
                extra={"event": "vault_missing"},
            )
        self._writer.status.publish()

    def state_dir_deleted(self) -> None:
        """The lock file lost its name (the state dir was deleted): lock a new one at once,
        then let the build loop rebuild the index there (state_dir.py). A state dir inside
        a vault folder that is gone went with it: nothing is made (recreating it would make
        an empty vault folder); the lock file is back when the folder is."""
        indexer = self._writer.progress.indexer
        if self._state_in_vault and indexer is not None and indexer.vault.io.root_identity() is None:
            return
        with self._state_guard:
            if self.state_lost or self._lock.intact():
                return
            try:
                self._lock.retake()
            except (IndexBusy, OSError) as exc:
                # Another process locked the new file first (possible only without abstract
                # lock names), or the folder cannot be made again: retried every heartbeat.
                if self._staleness.report("lock-lost"):
                    log.error(
                        "the index folder was deleted and cannot be taken again (%s)", type(exc).__name__
                    )
                return
            self.state_lost = True
        self._staleness.report("index-folder-deleted")
        log.warning(
            "the index folder was deleted; the writer lock is taken again and the index is rebuilt",
            extra={"event": "state_dir_recreated"},
        )
        self._writer.status.publish()
        self._batcher.wake()

    def recover_state_dir(self) -> None:
        """On the build loop, after `state_dir_deleted`: a new index from a full scan."""
        old = self._writer.progress.indexer
        assert old is not None
        generation = self._staleness.generation
        self._writer.status.set_phase("building")
        try:
            idx = reopen_indexer(self._settings, old, self._writer.progress.head)
            self._writer.adopt(idx)
            with self._state_guard:
                self.state_lost = False
            idx.catch_up()  # no snapshot: a full rebuild
            self._writer.progress.saw(idx.log.head_seq())
            self._staleness.after_commit(
                generation, resolves=True, watching=self.watcher_alive(), lost=self._batcher.rescan_pending()
            )
        finally:
            self._writer.progress.committed()
            self._writer.status.set_phase("idle")
        self._semantic.sync(idx)

    def storage_problem(self, exc: OSError, *, lost_hints: bool) -> bool:
        """Mark the index stale for a full or read-only state dir; True when it is one.

        `lost_hints`: events could not be recorded, so a full rescan must follow (the
        snapshot is never `fresh` while a change is known to be missing from the log).
        """
        mapped = from_os_error(exc, "state")
        if not isinstance(mapped, (StorageFull, StorageReadOnly)):
            return False
        reason = "storage-full" if isinstance(mapped, StorageFull) else "storage-read-only"
        first = self._staleness.report(reason)
        if lost_hints:
            self._batcher.request_rescan()
        if first:
            log.warning("%s: the last snapshot keeps serving; retrying with backoff", mapped.code)
        self._writer.status.publish()
        return True

    def build_succeeded(self) -> None:
        """The build loop committed: the next failure waits the shortest backoff again."""
        self._backoff.succeeded()

    def build_failed(self, exc: Exception) -> None:
        """The build loop's attempt failed: say why where it helps, then wait (a backoff)
        before the next, unless the state dir was deleted (rebuilt at once)."""
        wait_s = self._backoff.failed()
        if isinstance(exc, VaultUnavailable):
            self.vault_missing()  # expected while the folder is away: no traceback
        elif not self._lock.intact():
            self.state_dir_deleted()  # the build failed because its folder went
            self._writer.status.set_phase("idle")
            return
        else:
            if isinstance(exc, OSError):
                self.storage_problem(exc, lost_hints=False)
            log.error(
                "index build failed (%s); retrying in %.1f s\n%s",
                type(exc).__name__,
                wait_s,
                describe_failure(exc),
            )
        self._writer.status.set_phase("idle")
        self._batcher.wait_stopped(wait_s)
