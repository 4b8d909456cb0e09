"""What a loaded snapshot is made of in memory: DuckDB objects and typed note columns.

Layout inside the reader's in-memory DuckDB:
    main.seg_<id>_<table>   one per segment and table: `notes` is copied into memory
                            once (per-request Parquet scans of it are too slow), as a
                            table of the attached catalog `segstore` (its storage
                            compressed) that this view names; `links` (read by `related`
                            only), `headings`, `chunks` and `terms` stay `read_parquet`
                            views (one-note reads take headings from `SegmentHeadings`;
                            terms are term-sorted with small row groups so `term IN` prunes)
    s<snapshot_id>.<table>  the live rows of one snapshot: UNION ALL over its segments
                            minus its dead rows (`s<id>._dead`), for every table of
                            contracts.py, plus `_notes` = notes with `_seg`, the segment
                            holding each note's live rows (one-note reads skip the union)

Next to it, per segment, `SegmentColumns` (typed arrays for orientation, built from the
same Arrow table that fills `seg_<id>_notes`, so the Parquet file is decoded once), and
per snapshot a `LiveNotes` over them. Loading a snapshot whose segments are loaded already
costs only its tombstones: views are catalog entries, and no table is copied per snapshot.

All methods run under the reader's `_ddl_lock` (catalog changes are serialized).
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, TABLES, Manifest
from vault_agent.errors import IndexIncompatible
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.segment_columns import SegmentColumns, Vocabs, build_segment_columns
from vault_agent.query.segment_headings import SegmentHeadings
from vault_agent.tables import duck_type

# Tables copied into DuckDB memory once per segment; the others stay Parquet views.
# `links` was copied too (551k rows, ~64 MiB at 100k notes, 0.5 s of the snapshot open)
# although only `related` reads it (issue 11).
LOADED_TABLES: tuple[str, ...] = ("notes",)
# The in-memory catalog holding those copies. An in-memory database stores its tables
# uncompressed unless attached with COMPRESS (DuckDB ≥ 1.3): the columns then get the
# lightweight compression of a database file (dictionary, FSST, bit-packing): the
# 100k-note `notes` copy takes ~48 instead of ~84 MiB (issue 11).
STORE = "segstore"


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _empty_select(table: str, extra: str = "") -> str:
    cols = ", ".join(f"NULL::{duck_type(f.type)} AS {f.name}" for f in TABLES[table])
    return f"SELECT {cols}{extra} WHERE false"


class SnapshotCatalog:
    """Segment objects (loaded once, shared) and per-snapshot schemas of live views."""

    def __init__(self, state_dir: Path, ddl: duckdb.DuckDBPyConnection, lock: threading.Lock) -> None:
        self._state_dir = state_dir
        self._ddl = ddl
        # Binding a snapshot's views reads the footer of every Parquet file they name; the
        # files are immutable, so caching their metadata makes a new snapshot's views cheap
        # (≈ 0.4 s → 0.04 s at 100k notes). The setting is per cursor: this one does the DDL.
        self._ddl.execute("SET parquet_metadata_cache = true")
        self._ddl.execute(f"ATTACH ':memory:' AS {STORE} (COMPRESS)")
        self._lock = lock  # the reader's bookkeeping lock, for the maps read by drops
        self.vocabs = Vocabs.new()
        self._seg_objects: dict[int, set[str]] = {}  # segment id → its main.seg_* objects
        self._seg_columns: dict[int, SegmentColumns] = {}
        self._last_live: LiveNotes | None = None

    # ------------------------------------------------------------------ segments
    def _seg_file(self, name: str) -> str:
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise IndexIncompatible(
                "the snapshot manifest names an invalid segment file; run 'vault-agent reindex'"
            )
        return str(self._state_dir / SEGMENTS_DIR / name)

    def _create_from_arrow(self, qualified: str, table: pa.Table) -> None:
        view = "_arrow_" + qualified.replace(".", "_")
        self._ddl.register(view, table)
        try:
            self._ddl.execute(f"CREATE TABLE {qualified} AS SELECT * FROM {view}")
        finally:
            self._ddl.unregister(view)

    def load_segment(self, seg_id: int, files: dict[str, str]) -> SegmentColumns:
        """Create main.seg_<id>_<table> for every table and the segment's columns, once."""
        known = self._seg_columns.get(seg_id)
        if known is not None:
            return known
        made: set[str] = set()
        try:
            notes = (
                pq.read_table(self._seg_file(files["notes"]), schema=TABLES["notes"])
                if "notes" in files
                else TABLES["notes"].empty_table()
            )
            for table in TABLES:
                obj = f"seg_{seg_id}_{table}"
                made.add(obj)
                src = (
                    f"read_parquet({_sql_str(self._seg_file(files[table]))})"
                    if table in files
                    else f"({_empty_select(table)})"  # a segment without this table: no rows
                )
                if table == "notes":
                    self._create_from_arrow(f"{STORE}.main.{obj}", notes)
                elif table in LOADED_TABLES:
                    self._ddl.execute(f"CREATE TABLE {STORE}.main.{obj} AS SELECT * FROM {src}")
                if table in LOADED_TABLES:
                    src = f"{STORE}.main.{obj}"
                self._ddl.execute(f"CREATE VIEW main.{obj} AS SELECT * FROM {src}")
            headings = SegmentHeadings(self._seg_file(files["headings"]) if "headings" in files else None)
            columns = build_segment_columns(seg_id, notes, self.vocabs, headings)
        except BaseException:
            for obj in made:
                self._drop_obj(obj)
            raise
        with self._lock:
            self._seg_objects[seg_id] = made
            self._seg_columns[seg_id] = columns
        return columns

    # ------------------------------------------------------------------ snapshots
    def load(self, manifest: Manifest, schema: str) -> LiveNotes:
        """Load the segments a snapshot needs and create its schema of live views."""
        live = self.load_live(manifest)
        self.bind(manifest, schema, live)
        return live

    def load_live(self, manifest: Manifest) -> LiveNotes:
        """Load the segments a snapshot needs (DuckDB tables, typed columns) and its live
        notes; its SQL views come later (`bind`): a search or an orientation request
        needs none of them."""
        segs = [(self.load_segment(s.segment_id, s.files), s.deleted) for s in manifest.segments]
        live = LiveNotes.build(segs, self.vocabs, previous=self._last_live)
        self._last_live = live
        return live

    def bind(self, manifest: Manifest, schema: str, live: LiveNotes) -> None:
        """Create the snapshot's schema of live views over its loaded segments (binding
        costs about 1 ms per segment: every table's UNION ALL names every segment)."""
        ddl = self._ddl
        ddl.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        ddl.execute(f"CREATE SCHEMA {schema}")
        dead = live.dead_rows()
        dead_table = pa.table(
            {
                "seg": pa.array([seg for seg, _ in dead], pa.int32()),
                "path": pa.array([path for _, path in dead], pa.string()),
            }
        )
        self._create_from_arrow(f"{schema}._dead", dead_table)
        with_dead = {seg for seg, _ in dead}
        seg_ids = [s.segment_id for s in manifest.segments]
        for table, tschema in TABLES.items():
            extra = ", {seg} AS _seg" if table == "notes" else ""
            parts = []
            for seg_id in seg_ids:
                src = f"SELECT *{extra.format(seg=seg_id)} FROM main.seg_{seg_id}_{table}"
                if seg_id in with_dead:
                    src += f" WHERE path NOT IN (SELECT path FROM {schema}._dead WHERE seg = {seg_id})"
                parts.append(src)
            union = " UNION ALL ".join(parts) or _empty_select(table, extra.format(seg=0))
            if table == "notes":
                cols = ", ".join(f.name for f in tschema)
                ddl.execute(f"CREATE VIEW {schema}._notes AS {union}")
                ddl.execute(f"CREATE VIEW {schema}.notes AS SELECT {cols} FROM {schema}._notes")
            else:
                ddl.execute(f"CREATE VIEW {schema}.{table} AS {union}")

    def drop(self, schemas: list[str], segments_in_use: set[int]) -> None:
        """Drop retired snapshots' schemas and the segments no loaded snapshot names."""
        with self._lock:
            gone = [s for s in self._seg_objects if s not in segments_in_use]
            objs = [self._seg_objects.pop(s) for s in gone]
            for seg_id in gone:
                self._seg_columns.pop(seg_id, None)
        for schema in schemas:
            self._ddl.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        for made in objs:
            for obj in made:
                self._drop_obj(obj)

    def _drop_obj(self, obj: str) -> None:
        self._ddl.execute(f"DROP VIEW IF EXISTS main.{obj}")
        if obj.rsplit("_", 1)[-1] in LOADED_TABLES:
            self._ddl.execute(f"DROP TABLE IF EXISTS {STORE}.main.{obj}")
