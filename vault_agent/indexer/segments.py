"""Immutable segment files: one Parquet file per logical table, rows sorted per TABLE_SORT.

A segment is written table by table into `tmp/`, each file fsynced, then renamed into
`segments/` (and the directory fsynced) before any manifest names it. Rows arrive as
Arrow tables (built in parser workers) so the writer never holds per-row Python dicts.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from operator import itemgetter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import (
    ROW_GROUP_SIZE,
    SEGMENTS_DIR,
    TABLE_SORT,
    TABLES,
    TMP_DIR,
    ParsedNote,
    SegmentRef,
    fsync_dir,
    segment_file_name,
)
from vault_agent.private_dir import make_state_dirs
from vault_agent.term_rows import terms_table

COMPRESSION = "zstd"


def rows_to_tables(parsed: Iterable[ParsedNote]) -> dict[str, pa.Table]:
    """Column-wise Arrow tables of a batch of parsed notes, in the contract schemas (`terms`
    with its `term` and `path` dictionary-coded: term_rows.CODED_TERMS_SCHEMA).

    Column by column with C-level `map(itemgetter)`, and every row's `path` repeated from
    its note: 3x faster than per-row dict access. Terms are counted per batch (term_rows.py).
    """
    notes = list(parsed)
    out: dict[str, pa.Table] = {}
    for table, schema in TABLES.items():
        if table == "terms":
            out[table] = terms_table(notes)
            continue
        per_note = [[n.note] for n in notes] if table == "notes" else [getattr(n, table) for n in notes]
        cols: dict[str, list[object]] = {f.name: [] for f in schema}
        try:
            for note, rows in zip(notes, per_note, strict=True):
                if not rows:
                    continue
                for name, col in cols.items():
                    if name == "path" and table != "notes":
                        col.extend([note.note["path"]] * len(rows))
                    else:
                        col.extend(map(itemgetter(name), rows))
        except KeyError:  # a row without some column: slow path, missing values are null
            rows_all = [r for rows in per_note for r in rows]
            cols = {f.name: [r.get(f.name) for r in rows_all] for f in schema}
        out[table] = pa.Table.from_arrays([pa.array(cols[f.name], f.type) for f in schema], schema=schema)
    return out


def _nondecreasing(table: pa.Table, first: str, second: str) -> bool:
    """True when rows are ordered by (first, second) already (a few vector ops)."""
    n = table.num_rows
    if n <= 1:
        return True
    a, b = table.column(first), table.column(second)
    a0, a1, b0, b1 = a.slice(0, n - 1), a.slice(1), b.slice(0, n - 1), b.slice(1)
    ok = pc.or_(pc.less(a0, a1), pc.and_(pc.equal(a0, a1), pc.less_equal(b0, b1)))
    return bool(pc.all(ok).as_py())


def sort_table(table: pa.Table, name: str, presorted: bool = False) -> pa.Table:
    """Rows in the contract order (byte-wise string order, as DuckDB compares VARCHAR).

    With `presorted` the caller added notes in path order, each note's rows in ordinal order
    (the parser's order); that is checked, and then path tables need no sort and `terms`
    needs only a stable sort on the term (`_finish_terms`).
    """
    if name == "terms":
        return _finish_terms(_compact_terms(table), presorted)
    if table.num_rows <= 1:
        return table
    keys = TABLE_SORT[name]
    if presorted and _nondecreasing(table, keys[0], keys[1] if len(keys) > 1 else keys[0]):
        return table
    return table.sort_by([(k, "ascending") for k in keys])


_CODED = ("term", "path")  # the `terms` columns held as dictionary codes until the sort


def _compact_terms(table: pa.Table) -> pa.Table:
    """`terms` rows with `term` and `path` as dictionary codes: a segment's ~440 rows per
    note are held until its sort in ~10 bytes each instead of ~60 (the path repeats on
    every row of its note); `_finish_terms` decodes them."""
    columns = [
        pc.dictionary_encode(table.column(f.name))
        if f.name in _CODED and not pa.types.is_dictionary(f.type)  # a parse batch's are coded
        else table.column(f.name)
        for f in table.schema
    ]
    return pa.Table.from_arrays(columns, names=table.schema.names)


def _finish_terms(table: pa.Table, presorted: bool) -> pa.Table:
    """Held (compact) `terms` rows in the contract order; `_write_table` decodes them.

    Presorted (path, chunk order, checked), a stable sort on the term's rank in its
    dictionary does it: numpy's stable argsort of the int ranks, then gathering the int32
    codes (decoded from the small, cache-resident dictionaries as they are written).
    Gathering the string columns themselves at random cost 4x more (0.12 CPU-s per 1,000
    notes). Otherwise (compaction) the rows are decoded and sorted on all three keys.
    """
    schema = TABLES["terms"]
    if table.num_rows == 0:
        return schema.empty_table()
    table = table.unify_dictionaries().combine_chunks()
    columns = {name: table.column(name).chunk(0) for name in table.schema.names}
    order = None
    if presorted:
        path_ranks = _ranks(columns["path"])
        ordinals = columns["chunk_ordinal"]
        if _nondecreasing(pa.table({"p": path_ranks, "o": ordinals}), "p", "o"):
            order = pa.array(_stable_order(_ranks(columns["term"]).to_numpy()))
    if order is None:
        return _plain(table, schema).sort_by([(k, "ascending") for k in TABLE_SORT["terms"]])
    gathered = [
        pa.DictionaryArray.from_arrays(pc.take(col.indices, order), col.dictionary)
        if name in _CODED
        else pc.take(col, order)
        for name, col in columns.items()
    ]
    return pa.Table.from_arrays(gathered, names=list(columns))


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative integer keys, by LSD radix passes over 16-bit digits.

    numpy sorts 16-bit integers stably with a radix sort and wider ones with timsort; a
    segment's term ranks (~11k distinct at 5,000 notes, so one pass) sort in 0.025 s instead
    of 0.17 s. int32 positions (a segment has far fewer rows) also make the gathers cheaper.
    """
    top = int(keys.max()) if len(keys) else 0
    order: np.ndarray | None = None
    shift = 0
    while order is None or top >> shift:
        digit = ((keys >> shift) & 0xFFFF).astype(np.uint16)
        step = np.argsort(digit if order is None else digit[order], kind="stable")
        order = step if order is None else order[step]
        shift += 16
    return order.astype(np.int32) if len(order) < 2**31 else order


def _plain(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The rows with every column in its contract type (dictionary codes decoded)."""
    return pa.Table.from_arrays([table.column(f.name).cast(f.type) for f in schema], schema=schema)


WRITE_SLICE_GROUPS = 16  # row groups decoded and written at a time


def _write_table(table: pa.Table, path: Path, schema: pa.Schema, row_group_size: int) -> None:
    """One table file; a table still holding dictionary codes is decoded slice by slice, so
    a segment's plain `terms` rows (~130 MB at 5,000 notes) never exist all at once.
    Slices are whole row groups: the file is the one `pq.write_table` makes."""
    if not any(pa.types.is_dictionary(f.type) for f in table.schema):
        pq.write_table(table, path, row_group_size=row_group_size, compression=COMPRESSION)
        return
    step = row_group_size * WRITE_SLICE_GROUPS
    with pq.ParquetWriter(path, schema, compression=COMPRESSION) as writer:
        for offset in range(0, table.num_rows, step):
            writer.write_table(_plain(table.slice(offset, step), schema), row_group_size=row_group_size)


def _ranks(codes: pa.DictionaryArray) -> pa.Array:
    """Each row's rank of its value in the (duplicate-free) dictionary: the string order."""
    return pc.take(pc.rank(codes.dictionary, sort_keys="ascending", tiebreaker="first"), codes.indices)


# A reader of a hit's chunk text decodes whole row groups: at 8192 rows a text row group is
# ~1 MB of zstd to decode per hit; 1024 rows keep that ~8x smaller.
CHUNKS_ROW_GROUP_SIZE = 1024
# vault_query reads one property's or one tag's rows (key-sorted files): small row groups let
# a filter skip the rest by their statistics (a 8192-row group of props decodes ~0.4 MB).
KEYED_ROW_GROUP_SIZE = 1024
# A reader loads a segment's tasks whole (query/tasks/columns.py): one row group, one chunk
# per column, so nothing is copied to join chunks.
TASKS_ROW_GROUP_SIZE = 1 << 20
ROW_GROUP_SIZES = {
    "tasks": TASKS_ROW_GROUP_SIZE,
    "chunks": CHUNKS_ROW_GROUP_SIZE,
    "props": KEYED_ROW_GROUP_SIZE,
    "tags": KEYED_ROW_GROUP_SIZE,
}


class SegmentWriter:
    """Collects Arrow batches for one segment and writes it atomically on `finish`."""

    def __init__(self, index_dir: Path, segment_id: int, presorted: bool = False) -> None:
        self.index_dir = Path(index_dir)
        self.presorted = presorted
        self.segment_id = segment_id
        self._parts: dict[str, list[pa.Table]] = {t: [] for t in TABLES}
        self.note_count = 0
        self.nbytes = 0
        self._tmp_files: list[Path] = []

    def add(self, tables: dict[str, pa.Table]) -> None:
        for name in TABLES:
            tbl = tables[name]
            if tbl.num_rows:
                if name == "terms":
                    tbl = _compact_terms(tbl)
                self._parts[name].append(tbl)
                self.nbytes += tbl.nbytes
        self.note_count += tables["notes"].num_rows

    def paths(self) -> list[str]:
        return [p for tbl in self._parts["notes"] for p in tbl.column("path").to_pylist()]

    def finish(self) -> SegmentRef:
        """Sort, write, fsync and publish every table file; returns the segment's ref."""
        tmp_dir = self.index_dir / TMP_DIR
        seg_dir = self.index_dir / SEGMENTS_DIR
        make_state_dirs(tmp_dir, self.index_dir)
        make_state_dirs(seg_dir, self.index_dir)
        files: dict[str, str] = {}
        try:
            for name, schema in TABLES.items():
                parts = self._parts[name]
                table = pa.concat_tables(parts) if parts else schema.empty_table()
                self._parts[name] = []  # free the batches before the sort copies them
                if name == "terms":
                    table = _finish_terms(table, self.presorted)  # held compact (add)
                else:
                    table = sort_table(table, name, self.presorted)
                fname = segment_file_name(self.segment_id, name)
                tmp = tmp_dir / fname
                self._tmp_files.append(tmp)
                size = ROW_GROUP_SIZES.get(name, ROW_GROUP_SIZE)
                _write_table(table, tmp, schema, size)
                del table
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                files[name] = fname
            for fname in files.values():
                os.replace(tmp_dir / fname, seg_dir / fname)
            fsync_dir(seg_dir)
        except BaseException:
            self.abort()
            raise
        return SegmentRef(segment_id=self.segment_id, files=files, note_count=self.note_count)

    def abort(self) -> None:
        for tmp in self._tmp_files:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._parts = {t: [] for t in TABLES}


def drop_paths(tables: dict[str, pa.Table], paths: set[str]) -> dict[str, pa.Table]:
    """The tables without the rows of `paths`."""
    if not paths:
        return tables
    value_set = pa.array(sorted(paths), pa.string())
    return {
        k: t.filter(pc.invert(pc.is_in(t.column("path"), value_set=value_set))) for k, t in tables.items()
    }


def read_live(index_dir: Path, ref: SegmentRef, table: str, columns: list[str] | None = None) -> pa.Table:
    """Rows of one table of a segment whose path is not tombstoned."""
    path = Path(index_dir) / SEGMENTS_DIR / ref.files[table]
    cols = None if columns is None else list(dict.fromkeys(["path", *columns]))
    tbl = pq.read_table(path, columns=cols)
    if ref.deleted and tbl.num_rows:
        mask = pc.invert(pc.is_in(tbl.column("path"), value_set=pa.array(ref.deleted, pa.string())))
        tbl = tbl.filter(mask)
    return tbl
