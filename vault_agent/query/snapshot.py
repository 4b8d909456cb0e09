"""The read-only snapshot layer: one in-process DuckDB that serves committed snapshots.

Layout inside the in-memory database:
    main.seg_<id>_<table>   one table per loaded segment for notes, headings, links (loaded
                            once: per-request Parquet scans of unsorted files are too slow);
                            chunks and terms stay `read_parquet` views (big; terms are
                            term-sorted with small row groups so `term IN (...)` prunes)
    s<snapshot_id>.<table>  the live rows of one snapshot: UNION ALL over its segments
                            minus dead rows (`s<id>._dead`), for every table of contracts.py

A path's live rows are in the newest segment that holds it, unless that segment
tombstones it: dead rows of segment k = k's own tombstones plus every path that a newer
segment of the same snapshot holds. That rule is computed once per snapshot load.

A request pins one snapshot (refcount) and gets a private cursor with `USE s<id>`, so
every query of the request sees exactly one snapshot even when a newer one commits
meanwhile. A snapshot that is no longer CURRENT is dropped when its last request ends;
segment tables are dropped when no loaded snapshot names them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from vault_agent.config import Settings
from vault_agent.contracts import (
    CURRENT_FILE,
    SEGMENTS_DIR,
    TABLES,
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
    read_current_manifest,
    read_writer_state,
    shared_stat_checker,
    writer_alive,
)
from vault_agent.paths import Vault
from vault_agent.publish import add_publish_listener, remove_publish_listener
from vault_agent.tables import duck_type as _duck_type

log = logging.getLogger("vault_agent.query")

# Tables copied into DuckDB memory once per segment; the others stay Parquet views.
LOADED_TABLES: tuple[str, ...] = ("notes", "headings", "links")
FreshnessFn = Callable[[Manifest], Freshness]


@dataclass
class _Snap:
    """One loaded snapshot: its schema and the requests that hold it."""

    manifest: Manifest
    schema: str
    segment_ids: tuple[int, ...]
    refs: int = 0
    retired: bool = False


@dataclass
class SnapshotView:
    """What one request sees: one snapshot, its freshness, and a private cursor."""

    manifest: Manifest
    freshness: Freshness
    con: duckdb.DuckDBPyConnection

    @staticmethod
    def segment_table(table: str, segment_id: int) -> str:
        """Qualified name of one segment's table; `_notes._seg` says which one holds a
        note's live rows (its rows there are all live), so one-note reads skip the union."""
        return f"main.seg_{int(segment_id)}_{table}"

    def warnings(self) -> list[WarningItem]:
        """The freshness warning of this snapshot, or nothing when it is fresh."""
        warning = freshness_warning(self.freshness)
        return [warning] if warning else []


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


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
        self._seg_tables: dict[int, set[str]] = {}  # segment id → its main.seg_* objects
        self._seg_paths: dict[int, frozenset[str]] = {}  # segment id → paths it holds (immutable)
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
        snap, con = self._pin(cursor=True)
        assert con is not None
        try:
            con.execute(f"USE {snap.schema}")
            yield SnapshotView(manifest=snap.manifest, freshness=self._freshness(snap.manifest), con=con)
        finally:
            try:
                con.close()
            finally:
                self._unpin(snap)

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
            self._load(manifest)  # an unpublished preload under this id is replaced

    def close(self) -> None:
        """Release the in-memory database; later acquires fail with IndexNotFound."""
        remove_publish_listener(self._state_dir, self.preload)
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
                raise IndexNotFound()
            if self._current is not None and sig == self._current_sig:
                return self._take(self._current, cursor)
            if sig == self._incompatible_sig and self._incompatible_error is not None:
                raise self._incompatible_error
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

    def _switch(self, sig: Sig) -> _Snap:
        """Load the snapshot CURRENT names and make it current (caller holds _ddl_lock)."""
        manifest = read_current_manifest(self._state_dir)
        if manifest is None:
            raise IndexNotFound()
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
        with self._lock:
            old, self._current, self._current_sig = self._current, snap, sig
            snap.retired = False
            if old is not None and old is not snap:
                old.retired = True
                if old.refs == 0:
                    self._pending_drops.append(old)
        return snap

    # ------------------------------------------------------------------ loading (under _ddl_lock)
    def _seg_file(self, name: str) -> str:
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise IndexIncompatible(
                "the snapshot manifest names an invalid segment file; run 'vault-agent reindex'"
            )
        return str(self._state_dir / SEGMENTS_DIR / name)

    def _load_segment(self, seg_id: int, files: dict[str, str]) -> None:
        """Create main.seg_<id>_<table> for every table (tables or views), once."""
        if seg_id in self._seg_tables:
            return
        made: set[str] = set()
        try:
            for table, schema in TABLES.items():
                obj = f"seg_{seg_id}_{table}"
                if table in files:
                    src = f"read_parquet({_sql_str(self._seg_file(files[table]))})"
                else:  # a segment without this table contributes no rows
                    cols = ", ".join(f"NULL::{_duck_type(f.type)} AS {f.name}" for f in schema)
                    src = f"(SELECT {cols} WHERE false)"
                kind = "TABLE" if table in LOADED_TABLES else "VIEW"
                self._ddl.execute(f"CREATE {kind} main.{obj} AS SELECT * FROM {src}")
                made.add(obj)
        except BaseException:
            for obj in made:
                self._drop_obj(obj)
            raise
        paths = frozenset(
            r[0] for r in self._ddl.execute(f"SELECT path FROM main.seg_{seg_id}_notes").fetchall()
        )
        with self._lock:
            self._seg_tables[seg_id] = made
            self._seg_paths[seg_id] = paths

    def _load(self, manifest: Manifest) -> _Snap:
        """Load the segments a snapshot needs and create its schema of live views."""
        sid = manifest.snapshot_id
        schema = f"s{sid}"
        seg_ids = tuple(seg.segment_id for seg in manifest.segments)
        for seg in manifest.segments:
            self._load_segment(seg.segment_id, seg.files)
        ddl = self._ddl
        ddl.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        ddl.execute(f"CREATE SCHEMA {schema}")
        ddl.execute(f"CREATE TABLE {schema}._dead (seg INTEGER, path VARCHAR)")
        # Dead rows: own tombstones, plus paths held by any newer segment (newest wins).
        newer: set[str] = set()
        dead_rows: list[tuple[int, str]] = []
        with_dead: set[int] = set()
        for seg in sorted(manifest.segments, key=lambda s: s.segment_id, reverse=True):
            held = self._seg_paths[seg.segment_id]
            dead = (held & newer) | set(seg.deleted)
            if dead:
                with_dead.add(seg.segment_id)
                dead_rows.extend((seg.segment_id, p) for p in sorted(dead))
            newer |= held
        if dead_rows:
            ddl.executemany(f"INSERT INTO {schema}._dead VALUES (?, ?)", dead_rows)
        for table, tschema in TABLES.items():
            parts = []
            extra = ", {seg} AS _seg" if table == "notes" else ""
            for seg_id in seg_ids:
                src = f"SELECT *{extra.format(seg=seg_id)} FROM main.seg_{seg_id}_{table}"
                if seg_id in with_dead:
                    src += f" WHERE path NOT IN (SELECT path FROM {schema}._dead WHERE seg = {seg_id})"
                parts.append(src)
            if not parts:
                cols = ", ".join(f"NULL::{_duck_type(f.type)} AS {f.name}" for f in tschema)
                parts.append(f"SELECT {cols}{extra.format(seg=0)} WHERE false")
            union = " UNION ALL ".join(parts)
            if table == "notes":
                # The live notes of a snapshot as one path-sorted table: every orientation
                # query scans it, and `_seg` names the segment holding each note's live rows.
                ddl.execute(f"CREATE TABLE {schema}._notes AS {union} ORDER BY path")
                cols = ", ".join(f.name for f in tschema)
                ddl.execute(f"CREATE VIEW {schema}.notes AS SELECT {cols} FROM {schema}._notes")
            else:
                ddl.execute(f"CREATE VIEW {schema}.{table} AS {union}")
        snap = _Snap(manifest=manifest, schema=schema, segment_ids=seg_ids)
        with self._lock:
            self._snaps[sid] = snap
        log.info("snapshot loaded", extra={"snapshot_id": sid, "segments": len(seg_ids)})
        return snap

    def _drop_obj(self, obj: str) -> None:
        kind = "VIEW" if obj.rsplit("_", 1)[-1] not in LOADED_TABLES else "TABLE"
        self._ddl.execute(f"DROP {kind} IF EXISTS main.{obj}")

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
            segs = {s: self._seg_tables.pop(s) for s in list(self._seg_tables) if s not in in_use}
            for seg_id in segs:
                self._seg_paths.pop(seg_id, None)
        for snap in drops:
            self._ddl.execute(f"DROP SCHEMA IF EXISTS {snap.schema} CASCADE")
        for objs in segs.values():
            for obj in objs:
                self._drop_obj(obj)
