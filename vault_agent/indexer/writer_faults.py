"""What the writer does when its world breaks: watcher problems, a full or read-only state
dir, the vault folder vanishing or replaced, the state dir deleted under it.

`FaultRecovery` is a mixin of the engine's `Writer` (engine.py), kept apart so that what
happens on each fault reads in one place; it uses the writer's parts declared below.
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
"""

from __future__ import annotations

import logging
import threading

from vault_agent.config import Settings
from vault_agent.errors import IndexBusy, StorageFull, StorageReadOnly, from_os_error
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.reconcile import Reconciler
from vault_agent.indexer.staleness import Staleness
from vault_agent.indexer.state_dir import reopen_indexer
from vault_agent.indexer.watch_batches import HintBatcher
from vault_agent.indexer.watch_keeper import WatchKeeper
from vault_agent.semantic.embedder import SemanticIndexer

log = logging.getLogger("vault_agent.indexer.engine")


class FaultRecovery:
    """The writer's fault handling (see module doc); mixed into `engine.Writer`."""

    # The writer's parts these methods use (set by Writer.__init__ / start()).
    settings: Settings
    _lock: WriterLock
    _cond: threading.Condition
    _state_guard: threading.Lock
    _state_lost: bool
    _state_in_vault: bool
    _head: int
    _indexer: Indexer | None
    _keeper: WatchKeeper | None
    _reconciler: Reconciler | None
    _staleness: Staleness
    _batcher: HintBatcher
    _semantic: SemanticIndexer

    def _publish(self) -> None:
        raise NotImplementedError

    def _set_phase(self, phase: str) -> None:
        raise NotImplementedError

    def _watcher_alive(self) -> bool:
        raise NotImplementedError

    def _new_reconciler(self, idx: Indexer) -> Reconciler:
        raise NotImplementedError

    def _on_problem(self, reason: str) -> None:
        self._staleness.report(reason)
        self._batcher.request_rescan()
        self._publish()
        log.warning("watcher reported %s; a rescan follows", reason)

    def _check_vault_root(self, keeper: WatchKeeper) -> None:
        """Heartbeat: is the watched folder still the vault folder? (watch_keeper.py)"""
        state = keeper.check()
        if state == "vanished":
            self._vault_missing()
        elif state == "reattached":
            # Back, replaced, or the observer had died: what changed meanwhile was not seen.
            self._staleness.report("rescan")
            self._batcher.request_rescan()
            self._publish()

    def _vault_missing(self) -> None:
        """The vault folder is gone: stale, and nothing is committed until it is back."""
        if self._keeper is not None:
            self._keeper.saw_missing()
        if self._staleness.report("vault-missing"):
            log.warning(
                "the vault folder is missing (moved, deleted or unmounted); serving the last "
                "snapshot as stale until it is back",
                extra={"event": "vault_missing"},
            )
        self._publish()

    def _state_dir_deleted(self) -> None:
        """The lock file lost its name (the state dir was deleted): lock a new one at once,
        then let the build loop rebuild the index there (state_dir.py). A state dir inside
        a vault folder that is gone went with it: nothing is made (recreating it would make
        an empty vault folder); the lock file is back when the folder is."""
        if (
            self._state_in_vault
            and self._indexer is not None
            and self._indexer.vault.io.root_identity() is None
        ):
            return
        with self._state_guard:
            if self._state_lost or self._lock.intact():
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
            self._state_lost = True
        self._staleness.report("index-folder-deleted")
        log.warning(
            "the index folder was deleted; the writer lock is taken again and the index is rebuilt",
            extra={"event": "state_dir_recreated"},
        )
        self._publish()
        self._batcher.wake()

    def _recover_state_dir(self) -> None:
        """On the build loop, after `_state_dir_deleted`: a new index from a full scan."""
        assert self._indexer is not None
        generation = self._staleness.generation
        self._set_phase("building")
        try:
            self._indexer = idx = reopen_indexer(self.settings, self._indexer, self._head)
            self._reconciler = self._new_reconciler(idx)
            if self._keeper is not None:
                self._keeper.restart("index folder recreated")  # its event folder was watched
            with self._state_guard:
                self._state_lost = False
            idx.catch_up()  # no snapshot: a full rebuild
            self._head = max(self._head, idx.log.head_seq())
            self._staleness.after_commit(
                generation, resolves=True, watching=self._watcher_alive(), lost=self._batcher.rescan_pending()
            )
        finally:
            with self._cond:
                self._cond.notify_all()
            self._set_phase("idle")
        self._semantic.sync(idx)

    def _storage_problem(self, exc: OSError, *, lost_hints: bool) -> bool:
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
        self._publish()
        return True
