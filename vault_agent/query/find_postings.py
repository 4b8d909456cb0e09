"""`vault_find` Stage 0 candidates: the live chunks holding every query token.

The SQL it replaces grouped every posting of every query token by (path, chunk_ordinal)
with `list(DISTINCT term)`: at 100k notes a three-word query has ~600k postings, read as
strings into Arrow and hashed by DuckDB, a ~340 MB transient that set `serve`'s peak
resident set (issue 11). Here each segment's postings are read dictionary-encoded (a path
is an int32 code into the row groups' dictionary), a chunk is one int64 key
(path code · 2^32 + ordinal), and the chunks with every token are those whose key occurs
with every distinct token: a numpy sort of a few MB. Tombstoned notes are dropped by
their path code, the same rows the SQL's `dead_filter` dropped.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.query.budget import Budget
from vault_agent.query.postings import SegmentTerms

Keys = npt.NDArray[np.int64]
SCHEMA = pa.schema([("path", pa.string()), ("chunk_ordinal", pa.int32())])


def _codes(column: pa.ChunkedArray) -> tuple[pa.Array, npt.NDArray[np.int64]]:
    """(dictionary, int64 code per row) of a column read dictionary-encoded."""
    if column.num_chunks > 1:
        column = column.unify_dictionaries()
    if column.num_chunks == 0:
        return pa.array([], pa.string()), np.zeros(0, np.int64)
    indices = [np.asarray(c.indices.to_numpy(zero_copy_only=False), np.int64) for c in column.chunks]
    return column.chunk(0).dictionary, np.concatenate(indices)


def _lookup(dictionary: pa.Array, values: list[str]) -> npt.NDArray[np.int64]:
    """Position of each dictionary entry in `values` (sorted), -1 when absent."""
    found = pc.index_in(dictionary, value_set=pa.array(values, pa.string()))
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)


def _segment_chunks(seg: SegmentTerms, wanted: list[str], dead: list[str]) -> pa.Table | None:
    """(path, chunk_ordinal) of the segment's chunks holding every term of `wanted`,
    tombstoned paths left out."""
    groups = seg.groups_for(wanted)
    if not groups:
        return None
    pf = pq.ParquetFile(seg.file, metadata=seg.metadata, read_dictionary=["term", "path"])
    table = pf.read_row_groups(groups, columns=["term", "path", "chunk_ordinal"])
    term_dict, term_codes = _codes(table["term"])
    term = _lookup(term_dict, wanted)[term_codes] if len(term_codes) else term_codes
    path_dict, path_codes = _codes(table["path"])
    keep = term >= 0
    if dead and len(path_dict):
        keep &= _lookup(path_dict, dead)[path_codes] < 0
    ordinal = np.asarray(table["chunk_ordinal"].to_numpy(), np.int64)
    del table
    key = (path_codes[keep] << 32) | ordinal[keep]
    # One entry per (chunk, distinct term), then the chunks seen with every term.
    pairs = np.unique(key * len(wanted) + term[keep])
    chunks, count = np.unique(pairs // len(wanted), return_counts=True)
    full: Keys = chunks[count == len(wanted)]
    return pa.table(
        {
            "path": pc.take(path_dict, pa.array(full >> 32)),
            "chunk_ordinal": pa.array(full & 0xFFFFFFFF, pa.int32()),
        }
    )


def chunks_with_all(
    index: list[SegmentTerms], tokens: list[str], dead: dict[int, list[str]], budget: Budget
) -> pa.Table:
    """(path, chunk_ordinal) of every live chunk whose postings hold all `tokens`, in no
    particular order; no rows once the budget is spent (then `budget.hit`, as
    `Budget.run` does)."""
    wanted = sorted(set(tokens))
    parts: list[pa.Table] = []
    for seg in index:
        if budget.over():
            parts = []
            break
        part = _segment_chunks(seg, wanted, sorted(dead.get(seg.segment_id, [])))
        if part is not None and part.num_rows:
            parts.append(part)
    if not parts:
        return SCHEMA.empty_table()
    return pa.concat_tables(parts)
