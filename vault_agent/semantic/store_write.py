"""Writing embedding files (writer side only: readers import store.py, never this).

Every file is written like a segment file: tmp/ first, fsync, rename into segments/, fsync
the folder, all before any manifest names it, so a crash leaves at most an unnamed file
for GC and CURRENT always names complete files.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, TMP_DIR, fsync_dir
from vault_agent.private_dir import make_state_dirs
from vault_agent.semantic.store import TABLE, VECTORS, embedding_file_name, embedding_schema, vectors_schema
from vault_agent.semantic.vectors import VectorBlock

__all__ = ["Rows", "write_complete", "write_part", "write_vectors_twin"]

# Rows per Parquet row group: the writer encodes a row group's columns at once, and the
# vector column's levels and int32 values made writing 10,240 rows in one group cost the
# embed worker ~60 MB above its steady state (1,024: ~20 MB; same file size, no slower).
PARQUET_ROW_GROUP = 1024


class Rows:
    """The rows of one embedding file: passages (path, chunk ordinal, text hash) and their
    int8 codes and scales (vectors.quantize)."""

    def __init__(
        self,
        paths: Sequence[str],
        ordinals: Sequence[int],
        shas: Sequence[str],
        codes: np.ndarray,
        scale: np.ndarray,
    ) -> None:
        self.paths = list(paths)
        self.ordinals = [int(o) for o in ordinals]
        self.shas = list(shas)
        self.codes = np.ascontiguousarray(codes, dtype=np.int8)
        self.scale = np.asarray(scale, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def dim(self) -> int:
        return int(self.codes.shape[1]) if self.codes.ndim == 2 else 0


def _publish(index_dir: Path, name: str, write: Callable[[Path], None]) -> str:
    tmp_dir, seg_dir = Path(index_dir) / TMP_DIR, Path(index_dir) / SEGMENTS_DIR
    make_state_dirs(tmp_dir, Path(index_dir))
    tmp = tmp_dir / name
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, seg_dir / name)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return name


def _arrow(rows: Rows, model: str) -> Callable[[Path], None]:
    block = VectorBlock.build(rows.codes, rows.scale)
    width = int(block.basis.shape[1])
    schema = vectors_schema(rows.dim, width, model, block.mean, block.basis)
    sketch = pa.array(np.ascontiguousarray(block.sketch, dtype=np.float32).reshape(-1), pa.float32())
    batch = pa.record_batch(
        [
            pa.array(rows.paths, pa.string()).dictionary_encode(),
            pa.array(rows.ordinals, pa.int32()),
            pa.array(rows.shas, pa.string()),
            pa.FixedSizeListArray.from_arrays(pa.array(rows.codes.reshape(-1), pa.int8()), rows.dim),
            pa.array(rows.scale, pa.float32()),
            pa.FixedSizeListArray.from_arrays(sketch, width),
        ],
        schema=schema,
    )

    def write(tmp: Path) -> None:
        # Uncompressed, one record batch: readers map it and view its buffers as numpy.
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, schema) as out:
            out.write_batch(batch)

    return write


def _parquet(rows: Rows, model: str) -> Callable[[Path], None]:
    table = pa.Table.from_arrays(
        [
            pa.array(rows.paths, pa.string()),
            pa.array(rows.ordinals, pa.int32()),
            pa.array(rows.shas, pa.string()),
            pa.FixedSizeListArray.from_arrays(pa.array(rows.codes.reshape(-1), pa.int8()), rows.dim),
            pa.array(rows.scale, pa.float32()),
        ],
        schema=embedding_schema(rows.dim, model),
    )

    def write(tmp: Path) -> None:
        pq.write_table(table, tmp, compression="zstd", row_group_size=PARQUET_ROW_GROUP)

    return write


def write_complete(index_dir: Path, segment_id: int, model: str, rows: Rows) -> dict[str, str]:
    """The complete embedding files of a segment (Parquet, and its mapped Arrow twin);
    returns their `SegmentRef.files` entries."""
    names = {
        TABLE: _publish(
            index_dir, embedding_file_name(segment_id, TABLE, model, "parquet"), _parquet(rows, model)
        ),
        VECTORS: _publish(
            index_dir, embedding_file_name(segment_id, VECTORS, model, "arrow"), _arrow(rows, model)
        ),
    }
    fsync_dir(Path(index_dir) / SEGMENTS_DIR)
    return names


def write_part(index_dir: Path, segment_id: int, key: str, model: str, rows: Rows) -> str:
    """One partial file (Arrow, mapped by readers like a complete `_vec` file)."""
    name = _publish(index_dir, embedding_file_name(segment_id, key, model, "arrow"), _arrow(rows, model))
    fsync_dir(Path(index_dir) / SEGMENTS_DIR)
    return name


def write_vectors_twin(index_dir: Path, segment_id: int, model: str, rows: Rows) -> str:
    """The mapped twin of a complete Parquet file an older version wrote without one."""
    name = _publish(index_dir, embedding_file_name(segment_id, VECTORS, model, "arrow"), _arrow(rows, model))
    fsync_dir(Path(index_dir) / SEGMENTS_DIR)
    return name
