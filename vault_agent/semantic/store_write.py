"""Writing an embedding file (writer side only: readers import store.py, never this)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, TMP_DIR, fsync_dir, segment_file_name
from vault_agent.private_dir import make_state_dirs
from vault_agent.semantic.store import TABLE, embedding_schema

__all__ = ["write_embeddings"]


def write_embeddings(
    index_dir: Path,
    segment_id: int,
    model: str,
    paths: list[str],
    ordinals: list[int],
    shas: list[str],
    codes: np.ndarray,
    scale: np.ndarray,
) -> str:
    """Write, fsync and publish the embedding file of one segment (int8 codes and per-row
    scales: store.py); returns its file name.

    Like every segment file: tmp/ first, fsync, rename into segments/, fsync the folder,
    all before any manifest names it (a crash leaves at most an unnamed file for GC).
    """
    dim = int(codes.shape[1]) if codes.ndim == 2 else 0
    schema = embedding_schema(dim, model)
    flat = pa.array(np.ascontiguousarray(codes, dtype=np.int8).reshape(-1), pa.int8())
    table = pa.Table.from_arrays(
        [
            pa.array(paths, pa.string()),
            pa.array(ordinals, pa.int32()),
            pa.array(shas, pa.string()),
            pa.FixedSizeListArray.from_arrays(flat, dim),
            pa.array(np.asarray(scale, dtype=np.float32), pa.float32()),
        ],
        schema=schema,
    )
    name = segment_file_name(segment_id, TABLE)
    tmp_dir, seg_dir = Path(index_dir) / TMP_DIR, Path(index_dir) / SEGMENTS_DIR
    make_state_dirs(tmp_dir, Path(index_dir))
    tmp = tmp_dir / name
    try:
        pq.write_table(table, tmp, compression="zstd")
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, seg_dir / name)
        fsync_dir(seg_dir)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return name
