"""The read-only snapshot layer: an in-process DuckDB that serves committed snapshots.

A request pins one snapshot (refcount) and gets a private cursor with `USE s<id>`, so
every query of the request sees exactly one snapshot even when a newer one commits
meanwhile, and the snapshot's `LiveNotes` (typed arrays for orientation). When a snapshot
becomes current, every older one is retired: dropped at once when no request holds it,
else when its last request ends; segment objects are dropped when no loaded snapshot names
them. So the reader holds the current snapshot, those requests still pin, and preloads of
newer commits, whatever the order of commits and requests (a preload that no request made
current before the next commit arrived was kept forever before issue 32).

What a loaded snapshot consists of, and how it is built, is `snapshot_catalog.py` (typed
columns) and `duck_store.py` (DuckDB objects, one database per generation); the
generations and drops are `snapshot_stores.py`. A snapshot's SQL views are bound after its
segments are loaded: on a background thread right after a preload (the writer does not wait
for them) and at the latest when a request first uses its cursor; searches and orientation
requests, which answer from the engine and the typed columns, never wait for them. The same
background thread moves the current snapshot into a new generation when the database's
dead weight passes its budget (duck_store.py).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import duckdb

from vault_agent.config import Settings
from vault_agent.contracts import (
    CURRENT_FILE,
    Freshness,
    Manifest,
    WarningItem,
    freshness_warning,
)
from vault_agent.errors import IndexIncompatible, IndexNotFound
from vault_agent.freshness import (
    incompatible_error,
    is_compatible,
    missing_index_error,
    read_current_manifest,
)
from vault_agent.heap import release_if_grown, use_system_arrow_pool
from vault_agent.paths import Vault
from vault_agent.publish import add_publish_listener, remove_publish_listener
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.snapshot_catalog import LOADED_TABLES
from vault_agent.query.snapshot_freshness import FreshnessFn, SnapshotFreshness
from vault_agent.query.snapshot_stores import LoadedSnap, SnapshotStores
from vault_agent.query.snapshot_upkeep import Sig, SnapshotUpkeep
from vault_agent.reader_leases import ReaderLease
from vault_agent.semantic.snapshot_vectors import warm_vectors

log = logging.getLogger("vault_agent.query")

__all__ = ["LOADED_TABLES", "FreshnessFn", "SnapshotReader", "SnapshotView"]


class SnapshotView:
    """What one request sees: one snapshot, its freshness, and a private cursor (opened on
    first use, once the snapshot's views are bound)."""

    def __init__(
        self,
        manifest: Manifest,
        freshness: Freshness,
        live: LiveNotes,
        connect: Callable[[], duckdb.DuckDBPyConnection],
        stale_reason: str | None = None,
    ) -> None:
        self.manifest = manifest
        self.freshness = freshness
        self.stale_reason = stale_reason  # why it is stale, when known (contracts.STALE_REASONS)
        self.live = live  # the snapshot's live notes as typed arrays (orientation, one-note lookups)
        self._connect = connect
        self._con: duckdb.DuckDBPyConnection | None = None

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The request's private cursor, `USE`-ing the pinned snapshot's schema."""
        if self._con is None:
            self._con = self._connect()
        return self._con

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    @staticmethod
    def segment_table(table: str, segment_id: int) -> str:
        """Qualified name of one segment's table; `_notes._seg` says which one holds a
        note's live rows (its rows there are all live), so one-note reads skip the union."""
        return f"main.seg_{int(segment_id)}_{table}"

    def warnings(self) -> list[WarningItem]:
        """The freshness warning of this snapshot, or nothing when it is fresh."""
        warning = freshness_warning(self.freshness, self.stale_reason)
        return [warning] if warning else []


class SnapshotReader(SnapshotUpkeep):
    """Opens the snapshot CURRENT names and keeps it loaded across requests (thread-safe).

    Locks: `_lock` guards the bookkeeping and is only ever held briefly; `_ddl_lock`
    serializes catalog changes (loads, binds, drops, a new generation). A request that
    finds CURRENT changed waits for the load of the new snapshot (whoever started it), so
    once a commit is visible in CURRENT no request is answered from an older snapshot
    (a write's `wait_for_index` followed by a read sees the write). Requests already
    running keep their own snapshot; drops never wait for a load.
    """

    def __init__(self, settings: Settings, vault: Vault, freshness: FreshnessFn | None = None) -> None:
        self.settings = settings
        self.vault = vault
        self._state_dir = Path(settings.index_dir)
        use_system_arrow_pool()  # heap.py: freed Arrow buffers reusable by numpy and DuckDB
        self._lock = threading.Lock()
        self._ddl_lock = threading.Lock()
        self._closed = False
        self._stores = SnapshotStores(self._state_dir, self._lock)
        self._snaps: dict[int, LoadedSnap] = {}
        self._current: LoadedSnap | None = None
        self._current_sig: Sig | None = None
        self._incompatible_sig: Sig | None = None
        self._incompatible_error: IndexIncompatible | None = None
        self._pending_drops: list[LoadedSnap] = []
        self._renewing = False  # a new generation is being filled (snapshot_stores.py)
        self._binder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vault-agent-bind")
        self._lease = ReaderLease(self._state_dir)
        self._freshness = SnapshotFreshness(settings, freshness)
        add_publish_listener(self._state_dir, self.preload)

    # ------------------------------------------------------------------ public API
    @contextmanager
    def acquire(self) -> Iterator[SnapshotView]:
        """Pin the newest committed snapshot for one request.

        Raises:
            IndexNotFound: no committed snapshot exists.
            IndexIncompatible: the snapshot was built by another schema, parser or config.
        """
        snap = self._pin()
        view: SnapshotView | None = None
        try:
            state = self._freshness.of(snap.manifest)
            view = SnapshotView(
                snap.manifest,
                state,
                snap.live,
                lambda: self._cursor(snap),
                self.stale_reason() if state == "stale" else None,
            )
            yield view
        finally:
            try:
                if view is not None:
                    view.close()
            finally:
                self._unpin(snap)
                release_if_grown()  # heap.py: a heavy request's freed transients go back

    def current_manifest(self) -> Manifest | None:
        """The manifest CURRENT names (loading it when it changed), or None without one.

        Raises:
            IndexIncompatible: the snapshot was built by another schema, parser or config.
        """
        try:
            snap = self._pin()
        except IndexNotFound:
            return None
        self._unpin(snap)
        return snap.manifest

    def preload(self, manifest: Manifest) -> None:
        """Load a snapshot an in-process writer is about to publish (segments durable, CURRENT
        not yet replaced): the first request after the commit then finds it loaded."""
        if not is_compatible(self.settings, manifest):
            return
        with self._ddl_lock:
            with self._lock:
                known = self._snaps.get(manifest.snapshot_id)
                if self._closed or (known is not None and (known.manifest == manifest or known.refs)):
                    return
            snap = self._load(manifest)  # an unpublished preload under this id is replaced
            with self._lock:  # older preloads no request made current: this one supersedes them
                for older in [s for s in self._snaps.values() if s.snapshot_id < snap.snapshot_id]:
                    if older is not self._current:
                        self._retire(older)
        # Behind the commit: the writer publishes without waiting for these.
        self._background(self._ready_in_background, snap)
        self._background(self._drain)

    def _ready_in_background(self, snap: LoadedSnap) -> None:
        """After a preload (binder thread): bind its views and load its vectors, so the
        first request after the commit does neither, unless a newer snapshot came first."""
        with self._lock:
            newest = max(self._snaps, default=snap.snapshot_id) == snap.snapshot_id
        if not newest:
            return
        self._bind(snap)
        with self._lock:
            superseded = self._closed or self._snaps.get(snap.snapshot_id) is not snap
        if not superseded:
            warm_vectors(self, snap.manifest)

    def close(self) -> None:
        """Release the in-memory databases; later acquires fail with IndexNotFound."""
        remove_publish_listener(self._state_dir, self.preload)
        self._binder.shutdown(wait=True, cancel_futures=True)
        with self._ddl_lock, self._lock:
            if not self._closed:
                self._closed = True
                self._stores.close()
                self._lease.close()
            self._snaps.clear()
            self._current = None
            self._current_sig = None

    # ------------------------------------------------------------------ freshness
    def stale_reason(self) -> str | None:
        """Why the current snapshot is stale, when the writer or the stat scan knows."""
        return self._freshness.stale_reason()

    def recheck(self) -> Freshness | None:
        """Force a stat scan now (status on demand); the state, or None without a snapshot."""
        manifest = self.current_manifest()
        return None if manifest is None else self._freshness.recheck(manifest)

    # ------------------------------------------------------------------ pinning
    def _current_stat(self) -> Sig | None:
        try:
            st = os.stat(self._state_dir / CURRENT_FILE)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)

    def _closed_error(self) -> IndexNotFound:
        return IndexNotFound("the snapshot reader is closed; restart the server")

    @staticmethod
    def _take(snap: LoadedSnap) -> LoadedSnap:
        """Pin `snap` (caller holds _lock)."""
        snap.refs += 1
        return snap

    def _pin(self) -> LoadedSnap:
        """The snapshot to serve now, pinned; cheap (one stat) when CURRENT did not change."""
        with self._lock:
            if self._closed:
                raise self._closed_error()
            sig = self._current_stat()
            if sig is None:
                raise missing_index_error(self.settings)
            if self._current is not None and sig == self._current_sig:
                return self._take(self._current)
            if sig == self._incompatible_sig and self._incompatible_error is not None:
                raise self._incompatible_error
        preloaded = self._switch_preloaded(sig)
        if preloaded is not None:
            self._background(self._drain)  # the snapshots it retired, off the request's path
            return preloaded
        with self._ddl_lock:  # one loader at a time; the others wait here for its result
            with self._lock:
                if self._closed:
                    raise self._closed_error()
                sig = self._current_stat() or sig
                if self._current is not None and sig == self._current_sig:
                    return self._take(self._current)
            snap = self._switch(sig)
            self._drain_drops()
            with self._lock:
                return self._take(snap)

    def _unpin(self, snap: LoadedSnap) -> None:
        with self._lock:
            snap.refs -= 1
            if not (snap.retired and snap.refs == 0):
                return  # a retired snapshot waits in _pending_drops for its last request
        self._background(self._drain)  # off the request's path

    def _cursor(self, snap: LoadedSnap) -> duckdb.DuckDBPyConnection:
        """A private cursor on `snap`'s schema (binding its views first if still needed)."""
        self._bind(snap)
        with self._lock:
            if self._closed:
                raise self._closed_error()
            con = snap.store.db.cursor()  # open while `snap` is pinned (snapshot_stores.py)
        con.execute(f"USE {snap.schema}")
        return con

    def _bind(self, snap: LoadedSnap) -> None:
        """Create `snap`'s schema of SQL views unless done (any thread; under _ddl_lock)."""
        if snap.bound:
            return
        with self._ddl_lock:
            with self._lock:
                gone = not snap.refs and self._snaps.get(snap.snapshot_id) is not snap
                if snap.bound or self._closed or gone:
                    return  # done, closed, or dropped before its background bind ran
            self._stores.bind(snap)
            self._drain_drops()

    def _switch_preloaded(self, sig: Sig) -> LoadedSnap | None:
        """Make CURRENT's snapshot current and pin it when a preload already loaded it:
        no catalog change, so no wait behind a load or a bind. None otherwise."""
        manifest = read_current_manifest(self._state_dir)
        if manifest is None or not is_compatible(self.settings, manifest):
            return None
        with self._lock:
            snap = self._snaps.get(manifest.snapshot_id)
            if self._closed or snap is None or snap.manifest != manifest or self._current_stat() != sig:
                return None
            self._make_current(snap, sig)
            return self._take(snap)

    def _switch(self, sig: Sig) -> LoadedSnap:
        """Load the snapshot CURRENT names and make it current (caller holds _ddl_lock)."""
        manifest = read_current_manifest(self._state_dir)
        if manifest is None:
            raise missing_index_error(self.settings)
        if not is_compatible(self.settings, manifest):
            error = incompatible_error(self.settings, manifest)
            with self._lock:
                self._incompatible_sig, self._incompatible_error = sig, error
            raise error
        with self._lock:
            snap = self._snaps.get(manifest.snapshot_id)
            if snap is not None and snap.manifest != manifest and not snap.refs:
                snap = None  # a preload whose commit was never published; its id is reused
        if snap is None:
            snap = self._load(manifest)
        self._stores.bind(snap)  # the request is waiting for this snapshot anyway
        with self._lock:
            self._make_current(snap, sig)
        return snap
