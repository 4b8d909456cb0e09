"""Where a few terms' postings are in the snapshot's term-sorted Parquet segments.

The `terms` view scans every row group of every segment per query (hundreds of zone-map
checks and footer parses at 100k notes). Segments are sorted by term (contracts.TABLE_SORT),
so the row groups that can hold a term are known from each row group's minimum alone:
group i holds terms in [min_i, min_{i+1}]. This module keeps that index per snapshot
(`postings_index`) and the snapshot's tombstones per segment (`dead_paths`), from which
`vault_find`'s Stage 0 (find_postings.py) reads only those row groups.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.snapshot_cache import remember


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


def postings_index(
    reader: SnapshotReader, view: SnapshotView, cache: dict[Any, Any] | None
) -> list[SegmentTerms] | None:
    """The row-group index of the pinned snapshot's term segments (None: use the view)."""
    try:
        return term_index(Path(reader.settings.index_dir), view.manifest, cache)
    except (OSError, ValueError, pa.ArrowException):
        return None


def dead_paths(con: Any) -> dict[int, list[str]]:
    """The pinned snapshot's tombstones (its `_dead (seg, path)` view) per segment id."""
    dead: dict[int, list[str]] = {}
    for seg, path in con.execute("SELECT seg, path FROM _dead").fetchall():
        dead.setdefault(int(seg), []).append(str(path))
    return dead
