"""Embedding files: one immutable Parquet file per lexical segment, named by the manifest.

`seg-<id>.embeddings.parquet` sits beside the segment's other tables and is listed in its
`SegmentRef.files["embeddings"]`, so GC, tombstones and the "newest segment wins" rule
apply to it exactly as to `chunks`: a segment is immutable, so its embeddings are too.
Columns: path, chunk_ordinal (the note's first chunk), text_sha (sha256 of the embedded
passage), vector (fixed_size_list<float32>[dim], L2-normalized: any Parquet reader can
compute cosine as a dot product). The schema metadata names the model; vectors of another
model are never mixed in (they count as missing and are recomputed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TABLE = "embeddings"
MODEL_KEY = b"vault_agent.model"

__all__ = ["TABLE", "embedding_schema", "file_model", "read_vectors"]


def embedding_schema(dim: int, model: str) -> pa.Schema:
    return pa.schema(
        [
            ("path", pa.string()),
            ("chunk_ordinal", pa.int32()),
            ("text_sha", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ],
        metadata={MODEL_KEY: model.encode()},
    )


def file_model(path: Path) -> str | None:
    """The model that wrote an embedding file (None: unreadable or not one of ours)."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return None
    raw = meta.get(MODEL_KEY)
    return raw.decode() if raw else None


def read_vectors(path: Path, shas: set[str] | None = None) -> tuple[pa.Table, np.ndarray]:
    """(path, chunk_ordinal, text_sha) rows and their (n, dim) float32 vectors.

    With `shas`, only the rows whose passage hash is among them (cache look-ups).
    """
    table = pq.read_table(path)
    if shas is not None:
        table = table.filter(pc.is_in(table["text_sha"], value_set=pa.array(sorted(shas), pa.string())))
    vec_col = table["vector"].combine_chunks()
    dim = vec_col.type.list_size
    values = vec_col.values.to_numpy(zero_copy_only=False) if len(vec_col) else np.zeros(0, np.float32)
    vectors = np.asarray(values, dtype=np.float32).reshape(len(vec_col), dim)
    return table.drop_columns(["vector"]), vectors
