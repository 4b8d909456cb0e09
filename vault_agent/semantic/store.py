"""Embedding files: one immutable Parquet file per lexical segment, named by the manifest.

`seg-<id>.embeddings_v2.parquet` sits beside the segment's other tables and is listed in
its `SegmentRef.files["embeddings_v2"]`, so GC, tombstones and the "newest segment wins"
rule apply to it exactly as to `chunks`: a segment is immutable, so its embeddings are too.

Rows: one per embedded passage (a note has one or more: see passages.py). Columns: path,
chunk_ordinal (the chunk the passage starts at: where a hit points), text_sha (sha256 of
the passage), vector (fixed_size_list<int8>[dim]) and scale (float32): the L2-normalized
vector is `vector * scale` (any Parquet reader can compute cosine as a dot product).
The schema metadata names the model and the FORMAT; vectors of another model or format are
never mixed in: they count as missing and are recomputed.

Versioning: format 1 (key `embeddings`, float32 vectors, one passage per note) is read by
nobody any more; the writer re-embeds those segments under the new key and drops the old
key from the manifest (`LEGACY_TABLES`), GC then removes the old files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TABLE = "embeddings_v2"
LEGACY_TABLES = ("embeddings",)  # earlier formats: ignored by readers, replaced by the writer
FORMAT = "2"  # int8 codes + scale, several passages per note
MODEL_KEY = b"vault_agent.model"
FORMAT_KEY = b"vault_agent.embedding_format"

__all__ = ["FORMAT", "LEGACY_TABLES", "TABLE", "embedding_schema", "file_model", "read_vectors"]


def embedding_schema(dim: int, model: str) -> pa.Schema:
    return pa.schema(
        [
            ("path", pa.string()),
            ("chunk_ordinal", pa.int32()),
            ("text_sha", pa.string()),
            ("vector", pa.list_(pa.int8(), dim)),
            ("scale", pa.float32()),
        ],
        metadata={MODEL_KEY: model.encode(), FORMAT_KEY: FORMAT.encode()},
    )


def file_model(path: Path) -> str | None:
    """The model that wrote an embedding file of the current format (None: unreadable,
    not one of ours, or an older format)."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return None
    raw = meta.get(MODEL_KEY)
    if not raw or meta.get(FORMAT_KEY) != FORMAT.encode():
        return None
    return str(raw.decode())


def read_vectors(path: Path, shas: set[str] | None = None) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """(path, chunk_ordinal, text_sha) rows, their (n, dim) int8 codes and (n,) scales.

    With `shas`, only the rows whose passage hash is among them (cache look-ups).
    """
    table = pq.read_table(path)
    if shas is not None:
        table = table.filter(pc.is_in(table["text_sha"], value_set=pa.array(sorted(shas), pa.string())))
    vec_col = table["vector"].combine_chunks()
    dim = vec_col.type.list_size
    values = vec_col.values.to_numpy(zero_copy_only=False) if len(vec_col) else np.zeros(0, np.int8)
    codes = np.asarray(values, dtype=np.int8).reshape(len(vec_col), dim)
    scale = np.asarray(table["scale"].to_numpy(zero_copy_only=False), dtype=np.float32)
    return table.drop_columns(["vector", "scale"]), codes, scale
