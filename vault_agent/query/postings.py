"""Postings of a few terms, read straight from the snapshot's term-sorted Parquet segments.

The `terms` view scans every row group of every segment per query (hundreds of zone-map
checks and footer parses at 100k notes). Segments are sorted by term (contracts.TABLE_SORT),
so the row groups that can hold a term are known from each row group's minimum alone:
group i holds terms in [min_i, min_{i+1}]. This module keeps that index per snapshot and
reads only those row groups with pyarrow; `read_postings` leaves tombstones to the caller's
SQL (`dead_filter`), or chunk_scores.py scores them with pyarrow kernels.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest
from vault_agent.query.snapshot_cache import remember

COLUMNS = ["term", "path", "chunk_ordinal", "tf"]


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
