"""The reader's upkeep of its loaded snapshots: loading, retiring, dropping, new generations.

A mixin of `SnapshotReader` (snapshot.py), which decides what requests pin; the state both
share is declared here. The rule this module keeps: when a snapshot becomes current, every
older one is retired, and a retired snapshot is dropped once no request holds it, with what
only it used (snapshot_stores.py). So the reader holds the current snapshot, those requests
still pin and preloads of newer commits, whatever the order of commits and requests.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vault_agent.contracts import Manifest
from vault_agent.heap import release_free_memory
from vault_agent.per_owner import forget_released
from vault_agent.query.snapshot_stores import LoadedSnap, SnapshotStores
from vault_agent.reader_leases import ReaderLease

log = logging.getLogger("vault_agent.query")

Sig = tuple[int, int, int, int]  # CURRENT's (inode, mtime, size, ctime)


class SnapshotUpkeep:
    """Loads, retirements, drops and generations of a reader (see the module doc)."""

    _lock: threading.Lock
    _ddl_lock: threading.Lock
    _closed: bool
    _stores: SnapshotStores
    _snaps: dict[int, LoadedSnap]
    _current: LoadedSnap | None
    _current_sig: Sig | None
    _pending_drops: list[LoadedSnap]
    _renewing: bool
    _binder: ThreadPoolExecutor
    _lease: ReaderLease  # the snapshots this reader holds, for the writer's GC

    def held(self) -> dict[str, int]:
        """What the reader holds now (tests and benchmarks count it): loaded snapshots,
        retired ones still pinned, segments with columns, the current generation and its
        dead weight."""
        segments = len(self._stores.catalog.segment_ids())  # takes _lock itself
        with self._lock:
            return {
                "snapshots": len(self._snaps),
                "pending_drops": len(self._pending_drops),
                "segments": segments,
                "store_segments": len(self._stores.current.segment_ids()),
                "generation": self._stores.current.generation,
                "dead_bytes": self._stores.current.dead_bytes,
            }

    def settle(self, timeout_s: float = 60.0) -> None:
        """Wait until the background upkeep submitted so far (binds, drops, a new
        generation) has run: what `held` counts is then final (tests, benchmarks)."""
        with contextlib.suppress(RuntimeError):  # closed: nothing runs any more
            self._binder.submit(lambda: None).result(timeout_s)

    def _make_current(self, snap: LoadedSnap, sig: Sig) -> None:
        """Make `snap` current and retire the one it replaces and every older snapshot
        loaded meanwhile (a preload that no request made current before the next commit
        came: a compaction or an embedding commit right behind an edit): each is dropped
        now if no request holds it, else when its last request ends (caller holds _lock)."""
        old, self._current, self._current_sig = self._current, snap, sig
        snap.retired = False
        older = [s for s in self._snaps.values() if s.snapshot_id < snap.snapshot_id]
        for other in dict.fromkeys([*older, *([old] if old is not None else [])]):
            self._retire(other, keep=snap)

    def _retire(self, snap: LoadedSnap, keep: LoadedSnap | None = None) -> None:
        """Mark `snap` for dropping once no request holds it (caller holds _lock)."""
        if snap is not keep and not snap.retired:
            snap.retired = True
            self._pending_drops.append(snap)

    def _load(self, manifest: Manifest) -> LoadedSnap:
        """Load a snapshot (its new segments, its tombstones) and register it."""
        self._publish_lease(manifest.snapshot_id)  # before its files are read: GC keeps them
        snap = self._stores.load(manifest)
        with self._lock:
            replaced = self._snaps.get(snap.snapshot_id)
            self._snaps[snap.snapshot_id] = snap
            if replaced is not None:
                self._retire(replaced)  # a preload whose commit never came: its id is reused
        release_free_memory()  # the load's Parquet/Arrow transients are freed by now
        # Once per commit: DEBUG (a steady stream of edits commits about once a second).
        log.debug(
            "snapshot loaded", extra={"snapshot_id": snap.snapshot_id, "segments": len(snap.segment_ids)}
        )
        return snap

    def _drain_drops(self) -> None:
        """Drop retired, unpinned snapshots and what only they used (under _ddl_lock); then,
        when the database's dead weight passed its budget, start a new generation."""
        with self._lock:
            if self._closed:
                return
            pending = list(dict.fromkeys(s for s in self._pending_drops if s.retired))
            drops = [s for s in pending if s.refs == 0]
            self._pending_drops = [s for s in pending if s.refs > 0]  # pinned: dropped on unpin
            for snap in drops:
                if self._snaps.get(snap.snapshot_id) is snap:  # not a reload under its id
                    del self._snaps[snap.snapshot_id]
            alive = [*self._snaps.values(), *self._pending_drops]
            renew = not self._renewing and self._current is not None and self._stores.due()
            self._renewing = self._renewing or renew
        if drops:
            self._stores.release(drops, alive)
            self._publish_lease()
            # Per-reader caches of the query modules let go of what the reader dropped: as a
            # job of its own, since a request may hold such a cache's lock while it waits
            # for the DDL lock held here.
            held = ({s.snapshot_id for s in alive}, {i for s in alive for i in s.segment_ids})
            self._background(forget_released, self, *held)
            # Then what only the dropped snapshots used (their typed columns, DuckDB tables,
            # cache entries) is free: given back now, not at the next commit's load.
            self._background(release_free_memory)
        if renew:
            self._background(self._renew)

    def _publish_lease(self, loading: int | None = None) -> None:
        """Tell the GC which snapshots this reader holds (and the one it starts loading)."""
        with self._lock:
            ids = {s.snapshot_id for s in (*self._snaps.values(), *self._pending_drops)}
        self._lease.hold(ids | ({loading} if loading is not None else set()))

    def _drain(self) -> None:
        """`_drain_drops` from any thread without the DDL lock (the binder's jobs)."""
        with self._ddl_lock:
            self._drain_drops()

    def _background(self, job: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the reader is closing
            self._binder.submit(job, *args)

    def _renew(self) -> None:
        """Move the current snapshot into a new generation (binder thread): filled without
        the DDL lock (a commit's preload goes on meanwhile), caught up and swapped under it;
        the old generation closes when its last snapshot is dropped."""
        try:
            with self._lock:
                current = self._current
            if current is None or self._closed:
                return
            store = self._stores.fresh_store(current.manifest)
            with self._ddl_lock:
                with self._lock:
                    now = self._current
                if self._closed or now is None:
                    store.close()
                    return
                moved = self._stores.adopt(store, now)
                with self._lock:
                    if self._current is now:
                        self._snaps[moved.snapshot_id] = moved
                        self._make_current(moved, self._current_sig or (0, 0, 0, 0))
                    else:  # a newer preload became current meanwhile: this copy is already old
                        self._retire(moved)
                self._drain_drops()
        finally:
            with self._lock:
                self._renewing = False
