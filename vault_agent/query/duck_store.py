"""One in-memory DuckDB database of a snapshot reader: a generation of its SQL objects.

Layout inside the database:
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

Why generations: DuckDB keeps the footer of every Parquet file a view binding or a statement
read (`parquet_metadata_cache`: a new snapshot's views bind in 0.04 s instead of 0.4 s at
100k notes) in a cache of the database instance that forgets nothing (its LRU evicts only
under the memory limit, judged by an estimate about a quarter of the real size). Every
commit adds a segment, so under sustained edits the footers of dropped segments piled up:
~0.06 MB a commit at 10k notes, a third of `serve`'s growth before issue 32. A store counts
what it still holds for segments it dropped (`dead_bytes`: their footers as DuckDB holds
them, and their catalog entries); past DEAD_BYTES_BUDGET the reader loads its current
snapshot into a new store and closes this one once no request uses it (snapshot.py), which
gives back everything the old database held.

Not thread-safe by itself: the reader serializes catalog changes (its `_ddl_lock`), except
for a new generation being filled before anyone else can see it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, TABLES, Manifest
from vault_agent.errors import IndexIncompatible
from vault_agent.query.live_notes import LiveNotes
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
# What a dropped segment leaves in the database until its generation ends: DuckDB's parsed
# footer is ~5.4x the footer's bytes in the file (measured: a 45-row-group chunks file,
# 70 KB of footer, 380 KB resident), plus its catalog entries.
FOOTER_EXPANSION = 6
SEGMENT_OVERHEAD_BYTES = 16 << 10
# The explicit budget of that dead weight: at 10k notes and one commit a second, a new
# generation about every 5 minutes (a reload of the notes tables: ~0.1 s at 10k notes).
DEAD_BYTES_BUDGET = 24 << 20
_PARQUET_TAIL = 8  # u32 footer length + b"PAR1"


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _empty_select(table: str, extra: str = "") -> str:
    cols = ", ".join(f"NULL::{duck_type(f.type)} AS {f.name}" for f in TABLES[table])
    return f"SELECT {cols}{extra} WHERE false"


def footer_bytes(path: str) -> int:
    """Length of a Parquet file's footer (0 when unreadable: never fatal, only a budget)."""
    try:
        with open(path, "rb") as f:
            f.seek(-_PARQUET_TAIL, os.SEEK_END)
            tail = f.read(_PARQUET_TAIL)
    except OSError:
        return 0
    return struct.unpack("<I", tail[:4])[0] if len(tail) == _PARQUET_TAIL and tail[4:] == b"PAR1" else 0


class DuckStore:
    """One generation: a private in-memory database, the segments loaded into it and the
    snapshot schemas bound in it, and what its dropped segments left behind."""

    def __init__(self, state_dir: Path, generation: int = 1) -> None:
        self.generation = generation
        self._state_dir = state_dir
        self.db = duckdb.connect(":memory:")
        self._ddl = self.db.cursor()
        # Binding a snapshot's views reads the footer of every Parquet file they name; the
        # files are immutable, so caching their metadata makes a new snapshot's views cheap
        # (≈ 0.4 s → 0.04 s at 100k notes). The setting is per cursor: this one does the DDL.
        self._ddl.execute("SET parquet_metadata_cache = true")
        self._ddl.execute(f"ATTACH ':memory:' AS {STORE} (COMPRESS)")
        self._objects: dict[int, set[str]] = {}  # segment id → its main.seg_* objects
        self._weight: dict[int, int] = {}  # segment id → what it leaves behind once dropped
        self.dead_bytes = 0
        self.closed = False

    # ------------------------------------------------------------------ segments
    def has(self, seg_id: int) -> bool:
        return seg_id in self._objects

    def segment_ids(self) -> set[int]:
        return set(self._objects)

    def seg_file(self, name: str) -> str:
        """The path of a segment file a manifest names.

        Raises:
            IndexIncompatible: the name is not a plain file name.
        """
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

    def read_notes(self, files: dict[str, str]) -> pa.Table:
        """A segment's notes table (all its rows) as Arrow."""
        if "notes" not in files:
            return TABLES["notes"].empty_table()
        return pq.read_table(self.seg_file(files["notes"]), schema=TABLES["notes"])

    def load_segment(self, seg_id: int, files: dict[str, str], notes: pa.Table) -> None:
        """Create main.seg_<id>_<table> for every table (once per generation).

        Raises:
            IndexIncompatible: the manifest names an invalid file.
        """
        if seg_id in self._objects:
            return
        made: set[str] = set()
        try:
            for table in TABLES:
                obj = f"seg_{seg_id}_{table}"
                made.add(obj)
                src = (
                    f"read_parquet({_sql_str(self.seg_file(files[table]))})"
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
        except BaseException:
            for obj in made:
                self._drop_obj(obj)
            raise
        self._objects[seg_id] = made
        parquet = [self.seg_file(f) for t, f in files.items() if t in TABLES and f.endswith(".parquet")]
        footers = sum(footer_bytes(p) for p in parquet)
        self._weight[seg_id] = footers * FOOTER_EXPANSION + SEGMENT_OVERHEAD_BYTES

    # ------------------------------------------------------------------ snapshots
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
        """Drop retired snapshots' schemas and the segments none of this store's snapshots
        names; what DuckDB keeps of the segments counts towards `dead_bytes`."""
        for schema in schemas:
            self._ddl.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        for seg_id in [s for s in self._objects if s not in segments_in_use]:
            for obj in self._objects.pop(seg_id):
                self._drop_obj(obj)
            self.dead_bytes += self._weight.pop(seg_id, 0)

    def _drop_obj(self, obj: str) -> None:
        self._ddl.execute(f"DROP VIEW IF EXISTS main.{obj}")
        if obj.rsplit("_", 1)[-1] in LOADED_TABLES:
            self._ddl.execute(f"DROP TABLE IF EXISTS {STORE}.main.{obj}")

    def over_budget(self) -> bool:
        """Whether dropped segments left more behind than DEAD_BYTES_BUDGET."""
        return self.dead_bytes > DEAD_BYTES_BUDGET

    def close(self) -> None:
        """Release the database (idempotent)."""
        if not self.closed:
            self.closed = True
            self._ddl.close()
            self.db.close()
            self._objects.clear()
