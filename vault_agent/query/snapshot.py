"""The read-only snapshot layer: one in-process DuckDB that serves committed snapshots.

A request pins one snapshot (refcount) and gets a private cursor with `USE s<id>`, so
every query of the request sees exactly one snapshot even when a newer one commits
meanwhile, and the snapshot's `LiveNotes` (typed arrays for orientation). A snapshot that
is no longer CURRENT is dropped when its last request ends; segment objects are dropped
when no loaded snapshot names them. What a loaded snapshot consists of, and how it is
built, is `snapshot_catalog.py`. A snapshot's SQL views are bound after its segments are
loaded: on a background thread right after a preload (the writer does not wait for them)
and at the latest when a request first uses its cursor; searches and orientation requests,
which answer from the engine and the typed columns, never wait for them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
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
    compute_freshness,
    incompatible_error,
    is_compatible,
    missing_index_error,
    read_current_manifest,
    read_writer_state,
    shared_stat_checker,
    stale_reason,
    writer_alive,
)
from vault_agent.heap import release_free_memory, release_if_grown, use_system_arrow_pool
from vault_agent.paths import Vault
from vault_agent.publish import add_publish_listener, remove_publish_listener
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.snapshot_catalog import SnapshotCatalog

log = logging.getLogger("vault_agent.query")

__all__ = ["SnapshotReader", "SnapshotView"]
FreshnessFn = Callable[[Manifest], Freshness]


@dataclass
class _Snap:
    """One loaded snapshot: its schema and the requests that hold it."""

    manifest: Manifest
    schema: str
    segment_ids: tuple[int, ...]
    live: LiveNotes
    refs: int = 0
    retired: bool = False
    bound: bool = False  # its schema of SQL views exists (snapshot_catalog.bind)


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


Sig = tuple[int, int, int, int]


class SnapshotReader:
    """Opens the snapshot CURRENT names and keeps it loaded across requests (thread-safe).

    Locks: `_lock` guards the bookkeeping and is only ever held briefly; `_ddl_lock`
    serializes catalog changes (loads, drops) on the private `_ddl` cursor. A request that
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
        self._db: duckdb.DuckDBPyConnection | None = duckdb.connect(":memory:")
        self._ddl = self._db.cursor()
        self._snaps: dict[int, _Snap] = {}
        self._current: _Snap | None = None
        self._current_sig: Sig | None = None
        self._incompatible_sig: Sig | None = None
        self._incompatible_error: IndexIncompatible | None = None
        self._pending_drops: list[_Snap] = []
        self._catalog = SnapshotCatalog(self._state_dir, self._ddl, self._lock)
        self._binder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vault-agent-bind")
        self._freshness_fn = freshness
        self._stat_checker = shared_stat_checker(settings)
        add_publish_listener(self._state_dir, self.preload)

    # ------------------------------------------------------------------ public API
    @contextmanager
    def acquire(self) -> Iterator[SnapshotView]:
        """Pin the newest committed snapshot for one request.

        Raises:
            IndexNotFound: no committed snapshot exists.
            IndexIncompatible: the snapshot was built by another schema, parser or config.
        """
        snap, _ = self._pin(cursor=False)
        view: SnapshotView | None = None
        try:
            state = self._freshness(snap.manifest)
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
            snap, _ = self._pin(cursor=False)
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
                if self._db is None or (known is not None and (known.manifest == manifest or known.refs)):
                    return
            snap = self._load(manifest)  # an unpublished preload under this id is replaced
        # Bound behind the commit: the writer publishes without waiting for the views.
        with contextlib.suppress(RuntimeError):  # the reader is closing
            self._binder.submit(self._bind, snap)

    def close(self) -> None:
        """Release the in-memory database; later acquires fail with IndexNotFound."""
        remove_publish_listener(self._state_dir, self.preload)
        self._binder.shutdown(wait=True, cancel_futures=True)
        with self._ddl_lock, self._lock:
            if self._db is not None:
                self._ddl.close()
                self._db.close()
                self._db = None
            self._snaps.clear()
            self._current = None
            self._current_sig = None

    # ------------------------------------------------------------------ freshness
    def _freshness(self, manifest: Manifest) -> Freshness:
        """State of the pinned snapshot now: the writer's published state, else a stat scan
        (the first one per snapshot inline, then in the background at most every recheck_seconds)."""
        if self._freshness_fn is not None:
            return self._freshness_fn(manifest)
        state = compute_freshness(
            self.settings, manifest, read_writer_state(self._state_dir), self._stat_checker
        )
        if state == "unknown":
            # No stat scan of this snapshot yet (first request after start or after a new
            # commit): scan now rather than answer "unknown" for an unmodified vault.
            state = self._stat_checker.check(manifest, force=True)
        # An incompatible snapshot never reaches here (acquire raises); keep the type closed.
        return "unknown" if state == "incompatible" else state

    def stale_reason(self) -> str | None:
        """Why the current snapshot is stale, when the writer or the stat scan knows."""
        return stale_reason(read_writer_state(self._state_dir), self._stat_checker)

    def recheck(self) -> Freshness | None:
        """Force a stat scan now (status on demand); the state, or None without a snapshot."""
        manifest = self.current_manifest()
        if manifest is None:
            return None
        if self._freshness_fn is not None:
            return self._freshness_fn(manifest)
        writer = read_writer_state(self._state_dir)
        if writer_alive(writer) and writer is not None and writer.watching:
            return compute_freshness(self.settings, manifest, writer, self._stat_checker)
        if writer_alive(writer) and writer is not None and writer.phase == "building":
            return "updating"
        return self._stat_checker.check(manifest, force=True)

    # ------------------------------------------------------------------ pinning
    def _current_stat(self) -> Sig | None:
        try:
            st = os.stat(self._state_dir / CURRENT_FILE)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)

    def _take(self, snap: _Snap, cursor: bool) -> tuple[_Snap, duckdb.DuckDBPyConnection | None]:
        """Pin `snap` (caller holds _lock) and open the request's cursor."""
        assert self._db is not None
        snap.refs += 1
        return snap, (self._db.cursor() if cursor else None)

    def _pin(self, cursor: bool) -> tuple[_Snap, duckdb.DuckDBPyConnection | None]:
        """The snapshot to serve now, pinned; cheap (one stat) when CURRENT did not change."""
        with self._lock:
            if self._db is None:
                raise IndexNotFound("the snapshot reader is closed; restart the server")
            sig = self._current_stat()
            if sig is None:
                raise missing_index_error(self.settings)
            if self._current is not None and sig == self._current_sig:
                return self._take(self._current, cursor)
            if sig == self._incompatible_sig and self._incompatible_error is not None:
                raise self._incompatible_error
        preloaded = self._switch_preloaded(sig)
        if preloaded is not None:
            return preloaded
        with self._ddl_lock:  # one loader at a time; the others wait here for its result
            with self._lock:
                if self._db is None:
                    raise IndexNotFound("the snapshot reader is closed; restart the server")
                sig = self._current_stat() or sig
                if self._current is not None and sig == self._current_sig:
                    return self._take(self._current, cursor)
            snap = self._switch(sig)
            self._drain_drops()
            with self._lock:
                return self._take(snap, cursor)

    def _unpin(self, snap: _Snap) -> None:
        with self._lock:
            snap.refs -= 1
            if not (snap.retired and snap.refs == 0):
                return
            self._pending_drops.append(snap)
        if self._ddl_lock.acquire(blocking=False):  # a running load drains them when it ends
            try:
                self._drain_drops()
            finally:
                self._ddl_lock.release()

    def _cursor(self, snap: _Snap) -> duckdb.DuckDBPyConnection:
        """A private cursor on `snap`'s schema (binding its views first if still needed)."""
        self._bind(snap)
        with self._lock:
            if self._db is None:
                raise IndexNotFound("the snapshot reader is closed; restart the server")
            con = self._db.cursor()
        con.execute(f"USE {snap.schema}")
        return con

    def _bind(self, snap: _Snap) -> None:
        """Create `snap`'s schema of SQL views unless done (any thread; under _ddl_lock)."""
        if snap.bound:
            return
        with self._ddl_lock:
            with self._lock:
                gone = not snap.refs and self._snaps.get(snap.manifest.snapshot_id) is not snap
                if snap.bound or self._db is None or gone:
                    return  # done, closed, or dropped before its background bind ran
            self._bind_locked(snap)
            self._drain_drops()

    def _bind_locked(self, snap: _Snap) -> None:
        """`_bind` for a caller that holds _ddl_lock."""
        if not snap.bound:
            self._catalog.bind(snap.manifest, snap.schema, snap.live)
            snap.bound = True

    def _switch_preloaded(self, sig: Sig) -> tuple[_Snap, duckdb.DuckDBPyConnection | None] | None:
        """Make CURRENT's snapshot current and pin it when a preload already loaded it:
        no catalog change, so no wait behind a load or a bind. None otherwise."""
        manifest = read_current_manifest(self._state_dir)
        if manifest is None or not is_compatible(self.settings, manifest):
            return None
        with self._lock:
            snap = self._snaps.get(manifest.snapshot_id)
            if self._db is None or snap is None or snap.manifest != manifest or self._current_stat() != sig:
                return None
            self._make_current(snap, sig)
            return self._take(snap, False)

    def _switch(self, sig: Sig) -> _Snap:
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
        self._bind_locked(snap)  # the request is waiting for this snapshot anyway
        with self._lock:
            self._make_current(snap, sig)
        return snap

    def _make_current(self, snap: _Snap, sig: Sig) -> None:
        """Make `snap` current and retire the one it replaces: dropped now if no request
        holds it, else when its last request ends (caller holds _lock)."""
        old, self._current, self._current_sig = self._current, snap, sig
        snap.retired = False
        if old is not None and old is not snap:
            old.retired = True
            if old.refs == 0:
                self._pending_drops.append(old)

    # ------------------------------------------------------------------ loading (under _ddl_lock)
    def _load(self, manifest: Manifest) -> _Snap:
        """Load a snapshot (its new segments, its tombstones) and register it."""
        sid = manifest.snapshot_id
        schema = f"s{sid}"
        live = self._catalog.load_live(manifest)
        snap = _Snap(
            manifest=manifest,
            schema=schema,
            segment_ids=tuple(seg.segment_id for seg in manifest.segments),
            live=live,
        )
        with self._lock:
            self._snaps[sid] = snap
        release_free_memory()  # the load's Parquet/Arrow transients are freed by now
        log.info("snapshot loaded", extra={"snapshot_id": sid, "segments": len(snap.segment_ids)})
        return snap

    def _drain_drops(self) -> None:
        """Drop retired, unpinned snapshots and segments no loaded snapshot names (under _ddl_lock)."""
        with self._lock:
            if self._db is None:
                return
            drops = [s for s in self._pending_drops if s.retired and s.refs == 0]
            self._pending_drops = [s for s in self._pending_drops if s not in drops]
            for snap in drops:
                self._snaps.pop(snap.manifest.snapshot_id, None)
            in_use = {sid for s in self._snaps.values() for sid in s.segment_ids}
        self._catalog.drop([snap.schema for snap in drops], in_use)
