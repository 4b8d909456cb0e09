"""One segment's headings for one-note reads (outline, document tree, sections, get_note).

The headings file is path-sorted, each note's rows in document order (contracts
TABLE_SORT), so a note's headings are one contiguous run of rows. The first read that
needs a segment's headings decodes the file once with pyarrow and indexes the runs
(path → start, stop); every later read slices the run, with no query. Loading on first use
keeps a snapshot's open from decoding every heading of the vault (≈ 850k rows at 100k notes).
"""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HeadingTuple = tuple[int, int, str, str, bool]  # ordinal, level, text, id, body_available
SpanTuple = tuple[int, str, str, int]  # level, text, id, line (1-based, internal: section reads)
COLUMNS = ["path", "ordinal", "level", "text", "id", "body_available", "line"]


class SegmentHeadings:
    """The headings of one immutable segment file, loaded on first use (thread-safe)."""

    def __init__(self, file: str | None) -> None:
        self._file = file
        self._lock = threading.Lock()
        self._table: pa.Table | None = None
        self._runs: dict[str, tuple[int, int]] = {}

    def _load(self) -> pa.Table:
        with self._lock:
            if self._table is None:
                if self._file is None:  # a segment without a headings file has none
                    table = pa.table({c: pa.array([], pa.string()) for c in COLUMNS})
                else:
                    table = pq.read_table(self._file, columns=COLUMNS)
                paths = pc.dictionary_encode(table.column("path").combine_chunks())
                codes = paths.indices.to_numpy(zero_copy_only=False)
                starts = np.flatnonzero(np.diff(codes, prepend=-1)) if len(codes) else np.zeros(0, np.int64)
                # No rows (a segment whose notes have no headings): no runs, not one empty run.
                stops = np.append(starts[1:], len(codes)) if len(starts) else np.zeros(0, np.int64)
                names = paths.dictionary.to_pylist()
                self._runs = {names[codes[a]]: (int(a), int(b)) for a, b in zip(starts, stops, strict=True)}
                self._table = table.drop_columns(["path"])
            return self._table

    def of(self, path: str, limit: int) -> list[HeadingTuple]:
        """The first `limit` headings of `path` in document order."""
        table = self._load()
        run = self._runs.get(path)
        if run is None:
            return []
        start, stop = run
        rows = table.slice(start, min(stop - start, limit)).to_pydict()
        return list(
            zip(rows["ordinal"], rows["level"], rows["text"], rows["id"], rows["body_available"], strict=True)
        )

    def spans(self, path: str) -> list[SpanTuple]:
        """Every heading of `path` in document order with its line (no cap: a section read may
        address a heading past the outline's 500, and each section ends at the next heading)."""
        table = self._load()
        run = self._runs.get(path)
        if run is None:
            return []
        start, stop = run
        rows = table.slice(start, stop - start).select(["level", "text", "id", "line"]).to_pydict()
        return list(zip(rows["level"], rows["text"], rows["id"], rows["line"], strict=True))
