"""Postings of a few terms, read straight from the snapshot's term-sorted Parquet segments.

The `terms` view scans every row group of every segment per query (hundreds of zone-map
checks and footer parses at 100k notes). Segments are sorted by term (contracts.TABLE_SORT),
so the row groups that can hold a term are known from each row group's minimum alone:
group i holds terms in [min_i, min_{i+1}]. This module keeps that index per snapshot and
reads only those row groups with pyarrow; `read_postings` leaves tombstones to the caller's
SQL (`dead_filter`). `score_postings` scores BM25 with pyarrow kernels instead, from a
per-snapshot chunk map (lengths, tombstones) with the SQL's exact formula.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest
from vault_agent.query.toolkit import remember

COLUMNS = ["term", "path", "chunk_ordinal", "tf"]
POSTINGS_BATCH_ROWS = 2 * 8192  # rows decoded at once by the scorer (contracts.ROW_GROUP_SIZE groups)


@dataclass(frozen=True)
class SegmentTerms:
    segment_id: int
    file: Path
    metadata: pq.FileMetaData
    mins: list[str]  # per row group minimum term, non-decreasing

    def groups_for(self, terms: list[str]) -> list[int]:
        """Row groups that may hold any of the terms."""
        out: set[int] = set()
        n = len(self.mins)
        for t in terms:
            # Groups whose range [min_i, min_{i+1}] contains t.
            hi = bisect.bisect_right(self.mins, t)  # first group with min > t
            lo = bisect.bisect_left(self.mins, t)  # first group with min >= t
            out.update(range(max(0, lo - 1), min(hi, n)))
        return sorted(out)


def _segment(index_dir: Path, segment_id: int, name: str) -> SegmentTerms | None:
    path = index_dir / SEGMENTS_DIR / name
    md = pq.read_metadata(path)
    col = md.schema.to_arrow_schema().get_field_index("term")
    mins: list[str] = []
    for i in range(md.num_row_groups):
        stats = md.row_group(i).column(col).statistics
        if stats is None or not stats.has_min_max:
            return None
        mins.append(str(stats.min))
    if mins != sorted(mins):
        return None
    return SegmentTerms(segment_id, path, md, mins)


def term_index(
    index_dir: Path, manifest: Manifest, cache: dict[Any, Any] | None
) -> list[SegmentTerms] | None:
    """The per-segment row-group index of a snapshot (cached), or None when any segment
    lacks usable statistics (callers then use the `terms` view)."""
    key = ("postings_index", manifest.snapshot_id)
    if cache is not None and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    out: list[SegmentTerms] | None = []
    for seg in manifest.segments:
        name = seg.files.get("terms")
        if not name:
            continue
        found = _segment(index_dir, seg.segment_id, name)
        if found is None:
            out = None
            break
        assert out is not None
        out.append(found)
    if cache is not None:
        remember(cache, "postings_index", manifest.snapshot_id, out)
    return out


def read_postings(index: list[SegmentTerms], terms: list[str]) -> pa.Table:
    """(seg, term, path, chunk_ordinal, tf) rows of the terms in every segment (tombstones
    not yet applied)."""
    wanted = pa.array(sorted(set(terms)), pa.string())
    parts: list[pa.Table] = []
    for seg in index:
        groups = seg.groups_for(terms)
        if not groups:
            continue
        table = pq.ParquetFile(seg.file, metadata=seg.metadata).read_row_groups(groups, columns=COLUMNS)
        table = table.filter(pc.is_in(table["term"], value_set=wanted))
        if table.num_rows:
            seg_col = pa.array([seg.segment_id] * table.num_rows, pa.int32())
            parts.append(table.add_column(0, "seg", seg_col))
    if not parts:
        schema = pa.schema(
            [
                ("seg", pa.int32()),
                ("term", pa.string()),
                ("path", pa.string()),
                ("chunk_ordinal", pa.int32()),
                ("tf", pa.int32()),
            ]
        )
        return schema.empty_table()
    return pa.concat_tables(parts, promote_options="permissive")


def dead_paths(con: Any) -> dict[int, list[str]]:
    """The pinned snapshot's tombstones (its `_dead (seg, path)` view) per segment id."""
    dead: dict[int, list[str]] = {}
    for seg, path in con.execute("SELECT seg, path FROM _dead").fetchall():
        dead.setdefault(int(seg), []).append(str(path))
    return dead


def dead_filter(alias: str) -> str:
    """SQL condition dropping tombstoned rows (the snapshot schema's `_dead (seg, path)`)."""
    return f"NOT EXISTS (SELECT 1 FROM _dead d WHERE d.seg = {alias}.seg AND d.path = {alias}.path)"


# ---------------------------------------------------------------- vectorized BM25 (pyarrow)


@dataclass(frozen=True)
class SegmentChunks:
    """One segment's chunk rows, so a posting finds its chunk row (and length) without a join:
    row = base[path index] + ordinal when each note's ordinals are consecutive rows (the
    writer's order, checked), else by a hash lookup of (path index · 2^32 + ordinal)."""

    file: Path | None
    metadata: pq.FileMetaData | None
    paths: pa.Array  # distinct paths of the chunks file
    owner: pa.Array  # path index per chunk row
    ordinals: pa.Array  # ordinal per chunk row
    lengths: pa.Array  # token count per chunk row
    base: pa.Array | None  # int64 per path: its first row minus its first ordinal
    keys: pa.Array | None  # int64 per chunk row, only when base is None
    starts: list[int]  # first row of each row group
    dead: pa.Array  # paths tombstoned in this segment
    offset: int  # global number of this segment's first chunk row


@dataclass(frozen=True)
class SnapshotChunks:
    segments: dict[int, SegmentChunks]
    count: int  # live chunks
    avg: float  # mean token count of live chunks


def _i64(value: int) -> pa.Scalar:
    # Typed scalars: a bare Python number costs ~90 µs per kernel call here (pyarrow retries a
    # failing optional import while converting it).
    return pa.scalar(value, pa.int64())


def _f64(value: float) -> pa.Scalar:
    return pa.scalar(value, pa.float64())


def _keys(path_index: Any, ordinal: Any) -> Any:
    return pc.add(pc.multiply(pc.cast(path_index, pa.int64()), _i64(1 << 32)), pc.cast(ordinal, pa.int64()))


def _segment_chunks(file: Path | None) -> SegmentChunks:
    """One segment's chunk map (no tombstones, offset 0: those belong to a snapshot)."""
    none = pa.array([], pa.string())
    if file is None:
        ints = pa.array([], pa.int32())
        return SegmentChunks(None, None, none, ints, ints, ints, None, None, [], none, 0)
    pf = pq.ParquetFile(file)
    table = pf.read(columns=["path", "ordinal", "token_count"])
    paths = table["path"].combine_chunks()
    encoded = paths.dictionary_encode()
    ordinal = table["ordinal"].combine_chunks()
    numbers = pa.array(range(table.num_rows), pa.int64())
    firsts = (
        pa.table({"p": encoded.indices, "r": numbers})
        .group_by("p", use_threads=False)
        .aggregate([("r", "min")])
    )
    firsts = firsts.sort_by("p")
    base: pa.Array | None = pc.subtract(
        firsts["r_min"], pc.cast(pc.take(ordinal, firsts["r_min"]), pa.int64())
    )
    keys = None
    expected = pc.add(pc.take(base, encoded.indices), pc.cast(ordinal, pa.int64()))
    if table.num_rows and not pc.all(pc.equal(expected, numbers)).as_py():
        base, keys = None, _keys(encoded.indices, ordinal)
    lengths = table["token_count"].combine_chunks()
    starts = [0]
    for i in range(pf.metadata.num_row_groups):
        starts.append(starts[-1] + pf.metadata.row_group(i).num_rows)
    return SegmentChunks(
        file,
        pf.metadata,
        encoded.dictionary,
        encoded.indices,
        ordinal,
        lengths,
        base,
        keys,
        starts[:-1],
        none,
        0,
    )


def chunk_row(sc: SegmentChunks, index: Any, ordinals: Any) -> Any:
    """The row of each (path index, ordinal) in the segment's chunks file, null when none."""
    if sc.base is None:
        return pc.index_in(_keys(index, ordinals), value_set=sc.keys)
    row = pc.add(pc.take(sc.base, index), pc.cast(ordinals, pa.int64()))
    inside = pc.and_(pc.greater_equal(row, _i64(0)), pc.less(row, _i64(len(sc.owner))))
    row = pc.if_else(inside, row, pa.scalar(None, pa.int64()))
    # A row of another note means the note has no chunk with that ordinal.
    return pc.if_else(pc.equal(pc.take(sc.owner, row), index), row, pa.scalar(None, pa.int64()))


def _live_lengths(seg: SegmentChunks) -> pa.Array:
    if not len(seg.dead):
        return seg.lengths
    dead_index = pc.drop_null(pc.index_in(seg.dead, value_set=seg.paths))
    return seg.lengths.filter(pc.invert(pc.is_in(seg.owner, value_set=dead_index)))


def snapshot_chunks(
    index_dir: Path, manifest: Manifest, dead: dict[int, list[str]], cache: dict[Any, Any] | None
) -> SnapshotChunks:
    """Per-segment chunk maps of a snapshot, with the live chunk count and mean length.

    Cached per snapshot (the two newest kept) and per segment file (segments are immutable,
    so a new snapshot reloads only its new segments); entries of other segments are dropped.
    """
    key = ("chunk_map", manifest.snapshot_id)
    if cache is not None and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    segments: dict[int, SegmentChunks] = {}
    offset = rows = counted = total = 0
    names: set[tuple[str, str | None]] = set()
    for seg in manifest.segments:
        name = seg.files.get("chunks")
        names.add(("chunk_seg", name))
        loaded = cache.get(("chunk_seg", name)) if cache is not None and name else None
        if loaded is None:
            loaded = _segment_chunks(index_dir / SEGMENTS_DIR / name if name else None)
            if cache is not None and name:
                cache[("chunk_seg", name)] = loaded
        dead_paths = pa.array(sorted(dead.get(seg.segment_id, [])), pa.string())
        found = replace(loaded, dead=dead_paths, offset=offset)
        segments[seg.segment_id] = found
        offset += len(found.owner)
        live = _live_lengths(found)
        rows, counted, total = (
            rows + len(live),
            counted + pc.count(live).as_py(),
            total + (pc.sum(live).as_py() or 0),
        )
    # The value SQL avg() gives over integers: the exact sum divided once.
    out = SnapshotChunks(segments, rows, total / counted if counted else 0.0)
    if cache is not None:
        cache[key] = out
        held = [
            k
            for k in list(cache)
            if isinstance(k, tuple) and len(k) == 2 and k[0] in ("chunk_map", "chunk_seg")
        ]
        for k in held:
            if k[0] == "chunk_seg" and k not in names:
                cache.pop(k, None)
        for k in sorted(k for k in held if k[0] == "chunk_map")[:-2]:
            cache.pop(k, None)
    return out


def _dict_index(column: pa.ChunkedArray, value_set: pa.Array) -> pa.Array:
    """index_in over a column read dictionary-encoded: once per dictionary, not per row (the
    chunks' dictionaries unified first, so a large value set is hashed once)."""
    if column.num_chunks > 1 and pa.types.is_dictionary(column.type):
        column = column.unify_dictionaries()
        found = pc.index_in(column.chunk(0).dictionary, value_set=value_set)
        return pa.concat_arrays([pc.take(found, c.indices) for c in column.chunks])
    parts = [
        pc.take(pc.index_in(c.dictionary, value_set=value_set), c.indices)
        if pa.types.is_dictionary(c.type)
        else pc.index_in(c, value_set=value_set)
        for c in column.chunks
    ]
    return pa.concat_arrays(parts) if parts else pa.array([], pa.int32())


def _segment_postings(seg: SegmentTerms, sc: SegmentChunks, wanted: pa.Array, terms: list[str]) -> pa.Table | None:
    """(t, tf, row, len) of one segment's live postings of the wanted terms: t the term's
    index in `wanted`, row the chunk's row in the segment (null for an orphan), len its length."""
    groups = seg.groups_for(terms)
    if not groups:
        return None
    pf = pq.ParquetFile(seg.file, metadata=seg.metadata, read_dictionary=["term", "path"])
    parts: list[pa.Table] = []
    # A few row groups at a time, in file order, on this thread: a common term's postings
    # are read without holding a whole segment's (and without a malloc arena per decoder thread).
    batches = pf.iter_batches(batch_size=POSTINGS_BATCH_ROWS, row_groups=groups, columns=COLUMNS, use_threads=False)
    for batch in batches:
        table = pa.Table.from_batches([batch])
        term = _dict_index(table["term"], wanted)
        keep = pc.is_valid(term)
        if not pc.any(keep).as_py():
            continue
        table, term = table.filter(keep), term.filter(keep)  # other terms' rows never mapped
        part = pa.table({"t": term, "tf": table["tf"], "row": chunk_row(sc, _dict_index(table["path"], sc.paths), table["chunk_ordinal"])})
        if len(sc.dead):
            part = part.filter(pc.is_null(_dict_index(table["path"], sc.dead)))
        if part.num_rows:
            parts.append(part.append_column("len", pc.take(sc.lengths, part["row"])))
    return pa.concat_tables(parts) if parts else None


def _scores(part: pa.Table, idf: pa.Array, avg: float, k1: float, b: float) -> pa.Array:
    """BM25 of each posting, with the SQL's operation order."""
    tf = pc.cast(part["tf"], pa.float64())
    length = pc.cast(part["len"], pa.float64())
    norm = pc.add(_f64(1 - b), pc.divide(pc.multiply(_f64(b), length), _f64(max(avg, 1e-9))))
    top = pc.multiply(pc.multiply(pc.take(idf, part["t"]), tf), _f64(k1 + 1))
    return pc.divide(top, pc.add(tf, pc.multiply(_f64(k1), norm)))


def _idf(df: list[int], n: float) -> pa.Array:
    return pa.array([math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in df], pa.float64())


def score_postings(
    index: list[SegmentTerms],
    chunks: SnapshotChunks,
    terms: list[str],
    k1: float,
    b: float,
    df: dict[str, int] | None = None,
) -> pa.Table:
    """(g, score) per matching live chunk, g its global chunk row, score the unrounded BM25
    with the SQL's operation order (the SQL sums a chunk's terms in any order too); rows in
    ascending g order.

    With `df` (each term's live postings, as `related` keeps them per snapshot) one segment
    is read and scored at a time, so only its postings are held at once (a common term has
    ~200k at 100k notes); without it every posting is read first to count them.
    """
    wanted = pa.array(sorted(set(terms)), pa.string())
    n = float(chunks.count)
    size = sum(len(sc.owner) for sc in chunks.segments.values())
    sums = np.zeros(size, np.float64)
    present = np.zeros(size, np.bool_)
    pending: list[tuple[SegmentChunks, pa.Table]] = []
    idf = _idf([df.get(t, 0) for t in wanted.to_pylist()], n) if df is not None else None
    counts = [0] * len(wanted)
    for seg in index:
        sc = chunks.segments.get(seg.segment_id)
        part = _segment_postings(seg, sc, wanted, terms) if sc is not None else None
        if part is None or sc is None:
            continue
        if idf is None:  # df counts every live posting (orphans too, as the SQL does)
            for item in pc.value_counts(part["t"]).to_pylist():
                counts[item["values"]] += item["counts"]
            pending.append((sc, part))
        else:
            _accumulate(sums, present, sc, part, idf, chunks.avg, k1, b)
    if idf is None:
        idf = _idf(counts, n)
        for sc, part in pending:
            _accumulate(sums, present, sc, part, idf, chunks.avg, k1, b)
    rows = np.flatnonzero(present)
    return pa.table({"g": pa.array(rows, pa.int64()), "score": pa.array(sums[rows], pa.float64())})


def _accumulate(
    sums: npt.NDArray[np.float64],
    present: npt.NDArray[np.bool_],
    sc: SegmentChunks,
    part: pa.Table,
    idf: pa.Array,
    avg: float,
    k1: float,
    b: float,
) -> None:
    """Add one segment's posting scores to their chunks (a chunk sums its terms in posting
    order; numpy's bincount: ~30x less CPU than an Arrow group-by of a million postings)."""
    part = part.filter(pc.is_valid(part["len"]))
    if not part.num_rows:
        return
    local = np.asarray(part["row"].to_numpy(), np.int64)
    span = len(sc.owner)
    sums[sc.offset : sc.offset + span] += np.bincount(local, weights=_scores(part, idf, avg, k1, b).to_numpy(), minlength=span)
    present[sc.offset : sc.offset + span] |= np.bincount(local, minlength=span) > 0


def chunk_keys(chunks: SnapshotChunks, rows: pa.Array) -> pa.Table:
    """(path, chunk_ordinal) of global chunk rows, in the given order."""
    paths: list[Any] = []
    ordinals: list[Any] = []
    order: list[Any] = []
    for sc in chunks.segments.values():
        inside = pc.and_(
            pc.greater_equal(rows, _i64(sc.offset)), pc.less(rows, _i64(sc.offset + len(sc.owner)))
        )
        at = pc.indices_nonzero(inside)
        if not len(at):
            continue
        local = pc.subtract(pc.take(rows, at), _i64(sc.offset))
        paths.append(pc.take(sc.paths, pc.take(sc.owner, local)))
        ordinals.append(pc.take(sc.ordinals, local))
        order.append(at)
    if not order:
        return pa.table({"path": pa.array([], pa.string()), "chunk_ordinal": pa.array([], pa.int32())})
    table = pa.table(
        {
            "at": pa.chunked_array(order, pa.uint64()),
            "path": pa.chunked_array(paths, pa.string()),
            "chunk_ordinal": pa.chunked_array(ordinals, pa.int32()),
        }
    )
    return table.sort_by("at").drop_columns(["at"])


DETAIL_COLUMNS = ["heading_path", "start_line", "end_line", "text"]


def chunk_rows(chunks: SnapshotChunks, rows: list[int]) -> list[dict[str, Any]]:
    """DETAIL_COLUMNS of chunks by global row number, reading only the row groups holding them."""
    segs = sorted(chunks.segments.values(), key=lambda s: s.offset)
    offsets = [s.offset for s in segs]
    wanted: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for pos, g in enumerate(rows):
        seg_pos = bisect.bisect_right(offsets, g) - 1
        row = g - offsets[seg_pos]
        group = bisect.bisect_right(segs[seg_pos].starts, row) - 1
        wanted.setdefault((seg_pos, group), []).append((pos, row - segs[seg_pos].starts[group]))
    out: list[dict[str, Any]] = [{} for _ in rows]
    for (seg_pos, group), items in wanted.items():
        seg = segs[seg_pos]
        assert seg.file is not None
        table = pq.ParquetFile(seg.file, metadata=seg.metadata).read_row_group(group, columns=DETAIL_COLUMNS)
        taken = table.take(pa.array([r for _, r in items], pa.int64())).to_pylist()
        for (pos, _), values in zip(items, taken, strict=True):
            out[pos] = values
    return out
