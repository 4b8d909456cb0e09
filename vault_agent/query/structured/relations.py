"""The relations vault_query reads, each a single scan for DuckDB's planner.

The snapshot's views (`notes`, `props`, …) are a UNION ALL over every segment: at 100k
notes (20 segments) planning one statement over them costs ~10 ms of CPU before a row is
read, more than the answer. So a request attaches, on its own cursor:

    q_notes   the live notes' columns a query reads (path, folder, title, times, size,
              tags, aliases, and `seg`, the segment holding the note's live rows): one
              Arrow table per snapshot, built from the segments' loaded
              notes tables (each copied once, immutable) minus the snapshot's dead rows;
              ~20 MB at 100k notes, kept for the two newest snapshots;
    q_props   one `read_parquet` over the snapshot's props files (key-sorted: a filter on
    q_tags    a key reads that key's row groups), without the rows of dead notes.

They are temporary objects of the request's cursor and end with it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.contracts import SEGMENTS_DIR, TABLES
from vault_agent.per_owner import PerOwner
from vault_agent.tables import duck_type

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader, SnapshotView

NOTE_COLUMNS = ("path", "folder", "title", "mtime_ns", "size", "ctime_ns", "all_tags", "aliases")
KEEP_SNAPSHOTS = 2


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    segments: dict[int, pa.Table] = field(default_factory=dict)
    snapshots: dict[int, pa.Table] = field(default_factory=dict)


def _forget(cache: _Cache, snapshots: set[int], segments: set[int]) -> None:
    with cache.lock:
        for sid in [s for s in cache.snapshots if s not in snapshots]:
            del cache.snapshots[sid]
        for seg_id in [s for s in cache.segments if s not in segments]:
            del cache.segments[seg_id]


_caches: PerOwner[_Cache] = PerOwner(_Cache, _forget)


def _cache_for(reader: SnapshotReader) -> _Cache:
    return _caches.of(reader)


def segment_notes(reader: SnapshotReader, segment_id: int) -> pa.Table | None:
    """A segment's notes table as loaded by `live_notes` (all its rows, in file order)."""
    cache = _cache_for(reader)
    with cache.lock:
        return cache.segments.get(segment_id)


def dead_by_segment(view: SnapshotView) -> dict[int, list[str]]:
    dead: dict[int, list[str]] = {}
    for seg, path in view.live.dead_rows():
        dead.setdefault(int(seg), []).append(path)
    return dead


def live_notes(reader: SnapshotReader, view: SnapshotView, dead: dict[int, list[str]]) -> pa.Table:
    """The snapshot's live notes (NOTE_COLUMNS) as one Arrow table (cached per snapshot).

    Segments without dead rows are shared, not copied (an Arrow table of chunks)."""
    cache = _cache_for(reader)
    sid = view.manifest.snapshot_id
    with cache.lock:
        known = cache.snapshots.get(sid)
        if known is not None:
            return known
        columns = ", ".join(NOTE_COLUMNS)
        parts: list[pa.Table] = [
            view.con.sql(f"SELECT {columns}, 0::INTEGER AS seg FROM notes WHERE false").to_arrow_table()
        ]
        for seg in view.manifest.segments:
            table = cache.segments.get(seg.segment_id)
            if table is None:
                sql = f"SELECT {columns}, {int(seg.segment_id)}::INTEGER AS seg FROM {view.segment_table('notes', seg.segment_id)}"
                table = cache.segments[seg.segment_id] = view.con.sql(sql).to_arrow_table()
            gone = dead.get(seg.segment_id)
            if gone:
                table = table.filter(
                    pc.invert(pc.is_in(table["path"], value_set=pa.array(gone, pa.string())))
                )
            parts.append(table)
        notes = pa.concat_tables(parts)
        cache.snapshots[sid] = notes
        for old in sorted(cache.snapshots)[:-KEEP_SNAPSHOTS]:
            del cache.snapshots[old]
        current = {s.segment_id for s in view.manifest.segments}
        for seg_id in [s for s in cache.segments if s not in current]:
            del cache.segments[seg_id]  # only new snapshots are built from them
        return notes


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _empty(table: str) -> str:
    cols = ", ".join(f"NULL::{duck_type(f.type)} AS {f.name}" for f in TABLES[table])
    return f"SELECT {cols} WHERE false"


def page_notes(notes: pa.Table, paths: list[str]) -> list[dict[str, Any]]:
    """The rows of `paths` (a page: a few hundred at most) in their order, by a hash lookup
    of the Arrow column (a scan of 100k rows through SQL converts every column first)."""
    if not paths:
        return []
    found = notes.filter(pc.is_in(notes["path"], value_set=pa.array(paths, pa.string()))).to_pylist()
    by_path = {row["path"]: row for row in found}
    return [by_path[p] for p in paths if p in by_path]


def segment_files(reader: SnapshotReader, view: SnapshotView, table: str, segments: set[int]) -> list[str]:
    """The files of `table` of these segments (the rows of a note they hold are all live)."""
    seg_dir = Path(reader.settings.index_dir) / SEGMENTS_DIR
    return [
        str(seg_dir / s.files[table])
        for s in view.manifest.segments
        if s.segment_id in segments and table in s.files
    ]


def attach(reader: SnapshotReader, view: SnapshotView) -> pa.Table:
    """Register q_notes and create q_props and q_tags on the request's cursor; returns
    q_notes' table."""
    con = view.con
    # Footers of immutable files, read once per process (the setting is per cursor).
    con.execute("SET parquet_metadata_cache = true")
    dead = dead_by_segment(view)
    notes = live_notes(reader, view, dead)
    con.register("q_notes", notes)
    seg_dir = Path(reader.settings.index_dir) / SEGMENTS_DIR
    files = {
        table: {
            s.segment_id: str(seg_dir / s.files[table]) for s in view.manifest.segments if table in s.files
        }
        for table in ("props", "tags")
    }
    if dead:  # (file, path) of every dead row of these tables, for an anti-join
        pairs = [
            (f[seg], p) for f in files.values() for seg, paths in dead.items() if seg in f for p in paths
        ]
        con.register(
            "q_dead",
            pa.table(
                {
                    "file": pa.array([f for f, _ in pairs], pa.string()),
                    "path": pa.array([p for _, p in pairs], pa.string()),
                }
            ),
        )
    for table, by_segment in files.items():
        if not by_segment:
            con.execute(f"CREATE OR REPLACE TEMP VIEW q_{table} AS {_empty(table)}")
            continue
        listing = ", ".join(_literal(f) for f in by_segment.values())
        rows = f"read_parquet([{listing}], filename = true)"
        if dead:
            rows = (
                f"(SELECT * FROM {rows} r WHERE NOT EXISTS "
                "(SELECT 1 FROM q_dead d WHERE d.file = r.filename AND d.path = r.path))"
            )
        con.execute(f"CREATE OR REPLACE TEMP VIEW q_{table} AS SELECT * EXCLUDE (filename) FROM {rows}")
    return notes
