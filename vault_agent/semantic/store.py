"""Embedding files: immutable files per lexical segment, named by the manifest.

A segment's vectors live in files listed in its `SegmentRef.files`, beside its other
tables, so GC, tombstones and the "newest segment wins" rule apply to them exactly as to
`chunks`: a segment is immutable, so its embeddings are too.

- `embeddings_v2` → `seg-<id>.embeddings_v2_m<tag>.parquet` (tag: the model's, embedding_file_name): every live note of the segment
  (the segment is *complete*). Columns: path, chunk_ordinal (the chunk the passage starts
  at: where a hit points), text_sha (sha256 of the passage), vector
  (fixed_size_list<int8>[dim]) and scale (float32): the L2-normalized vector is
  `vector * scale`, so any Parquet reader can compute cosine as a dot product. The schema
  metadata names the model and the FORMAT; vectors of another model or format are never
  mixed in: they count as missing and are recomputed.
- `embeddings_v2_vec` → `seg-<id>.embeddings_v2_vec_m<tag>.arrow`: the same rows as an
  uncompressed Arrow IPC file plus what loading would otherwise recompute (the search
  sketch, vectors.py: one row each, and the block's mean and basis in the metadata).
  Readers map it from disk (no decoding, no SVD): a fresh process answers its first
  semantic query without loading vectors first. Derived data: a segment without it (written
  by an older version) is read from the Parquet file, and the writer adds it.
- `embeddings_v2_p<k>` → `seg-<id>.embeddings_v2_p<k>_m<tag>.arrow`: *partial* files, while a
  segment is being embedded: each holds the notes of one published batch (same layout as
  the `_vec` file). `SegmentRef.embedded_notes` counts the notes they cover. When the
  segment completes, its complete files replace the parts in the next snapshot.

Versioning: format 1 (key `embeddings`, float32 vectors, one passage per note) is read by
nobody any more; the writer re-embeds those segments under the new key and drops the old
key from the manifest (`LEGACY_TABLES`), GC then removes the old files.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TABLE = "embeddings_v2"
VECTORS = "embeddings_v2_vec"  # the complete file's mapped twin (Arrow IPC)
PART_PREFIX = "embeddings_v2_p"  # partial files: embeddings_v2_p1, embeddings_v2_p2, ...
LEGACY_TABLES = ("embeddings",)  # earlier formats: ignored by readers, replaced by the writer
FORMAT = "2"  # int8 codes + scale, several passages per note
VECTORS_FORMAT = "1"  # the Arrow layout of `_vec` and part files
MODEL_KEY = b"vault_agent.model"
FORMAT_KEY = b"vault_agent.embedding_format"
VECTORS_FORMAT_KEY = b"vault_agent.vectors_format"
MEAN_KEY = b"vault_agent.sketch_mean"  # float32 bytes, (dim,)
BASIS_KEY = b"vault_agent.sketch_basis"  # float32 bytes, (dim, width), C order

_PART_RE = re.compile(r"^embeddings_v2_p(\d+)$")

__all__ = [
    "FORMAT",
    "LEGACY_TABLES",
    "PART_PREFIX",
    "TABLE",
    "VECTORS",
    "MappedVectors",
    "embedding_file_name",
    "covered_paths",
    "embedding_keys",
    "embedding_schema",
    "file_model",
    "is_complete",
    "map_vectors",
    "part_key",
    "part_keys",
    "part_number",
    "read_vectors",
    "vectors_schema",
]


def part_key(number: int) -> str:
    return f"{PART_PREFIX}{number}"


def part_number(key: str) -> int | None:
    m = _PART_RE.match(key)
    return int(m.group(1)) if m else None


def part_keys(files: Mapping[str, str]) -> list[str]:
    """The partial-file keys of a segment's file list, in publication order."""
    found = [(n, k) for k in files if (n := part_number(k)) is not None]
    return [k for _, k in sorted(found)]


def is_complete(files: Mapping[str, str]) -> bool:
    """Whether a segment has its complete embedding file (it may still be another model's)."""
    return TABLE in files


def embedding_keys(files: Mapping[str, str], *, complete_ok: bool = True) -> list[str]:
    """The keys a reader loads vectors from: the complete file (its mapped twin when
    present), else the partial files. `complete_ok=False`: the complete file is another
    model's (being replaced), so only the parts count."""
    if TABLE in files and complete_ok:
        return [VECTORS if VECTORS in files else TABLE]
    return part_keys(files)


def embedding_file_name(segment_id: int, key: str, model: str, suffix: str) -> str:
    """`seg-<id>.<key>_m<tag>.<suffix>`: the model's tag (8 hex digits of its id's sha1) in
    the name, so a model change writes new files beside the old ones (a snapshot's files
    never change under it) instead of replacing them."""
    tag = hashlib.sha1(model.encode("utf-8")).hexdigest()[:8]
    return f"seg-{segment_id}.{key}_m{tag}.{suffix}"


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


def vectors_schema(dim: int, width: int, model: str, mean: np.ndarray, basis: np.ndarray) -> pa.Schema:
    """The Arrow layout of `_vec` and part files: Parquet's columns plus the sketch."""
    return pa.schema(
        [
            ("path", pa.dictionary(pa.int32(), pa.string())),
            ("chunk_ordinal", pa.int32()),
            ("text_sha", pa.string()),
            ("vector", pa.list_(pa.int8(), dim)),
            ("scale", pa.float32()),
            ("sketch", pa.list_(pa.float32(), width)),
        ],
        metadata={
            MODEL_KEY: model.encode(),
            FORMAT_KEY: FORMAT.encode(),
            VECTORS_FORMAT_KEY: VECTORS_FORMAT.encode(),
            MEAN_KEY: np.ascontiguousarray(mean, dtype=np.float32).tobytes(),
            BASIS_KEY: np.ascontiguousarray(basis, dtype=np.float32).tobytes(),
        },
    )


_models_lock = threading.Lock()
_models: dict[tuple[Path, int, int], str] = {}  # (path, inode, mtime): files are immutable
MAX_REMEMBERED_MODELS = 4096


def _read_model(path: Path) -> str | None:
    try:
        if path.suffix == ".arrow":
            with pa.memory_map(str(path), "r") as src:
                meta = pa.ipc.open_file(src).schema.metadata or {}
            if meta.get(VECTORS_FORMAT_KEY) != VECTORS_FORMAT.encode():
                return None
        else:
            meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return None
    raw = meta.get(MODEL_KEY)
    if not raw or meta.get(FORMAT_KEY) != FORMAT.encode():
        return None
    return str(raw.decode())


def file_model(path: Path) -> str | None:
    """The model that wrote an embedding file of the current format (None: unreadable,
    not one of ours, or an older format). Remembered per file (files are immutable)."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError:
        return None
    key = (path, st.st_ino, st.st_mtime_ns)
    with _models_lock:
        known = _models.get(key)
    if known is not None:
        return known
    model = _read_model(path)
    if model is None:
        return None
    with _models_lock:
        if len(_models) >= MAX_REMEMBERED_MODELS:
            _models.clear()
        _models[key] = model
    return model


class MappedVectors:
    """One embedding file mapped from disk (`_vec`/part files) or decoded (Parquet).

    `codes`, `scale` (and `sketch`, `mean`, `basis` when the file carries them) are numpy
    views of the mapping: nothing is copied, and the pages are the page cache's."""

    def __init__(
        self,
        table: pa.Table,
        codes: np.ndarray,
        scale: np.ndarray,
        sketch: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> None:
        self.table = table  # path, chunk_ordinal, text_sha (and the rest, unused)
        self.codes = codes
        self.scale = scale
        self.sketch = sketch  # (mean, basis, sketch rows) or None

    @property
    def rows(self) -> int:
        return len(self.scale)


def _fixed_list_numpy(column: pa.ChunkedArray | pa.Array, dtype: type[np.generic]) -> np.ndarray:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    width = arr.type.list_size
    if len(arr) == 0:
        return np.zeros((0, width), dtype)
    values = arr.flatten().to_numpy(zero_copy_only=False)  # a view: primitive values, no nulls
    return np.asarray(values, dtype=dtype).reshape(len(arr), width)


def map_vectors(path: Path) -> MappedVectors:
    """An embedding file's rows and vectors: an `.arrow` file is memory-mapped (zero
    copy), a Parquet file is decoded.

    Raises:
        OSError, pyarrow.ArrowInvalid: the file cannot be read.
    """
    path = Path(path)
    if path.suffix != ".arrow":
        table, codes, scale = read_vectors(path)
        return MappedVectors(table, codes, scale, None)
    source = pa.memory_map(str(path), "r")  # closed with the last buffer that uses it
    reader = pa.ipc.open_file(source)
    table = (
        reader.read_all() if reader.num_record_batches != 1 else pa.Table.from_batches([reader.get_batch(0)])
    )
    meta = table.schema.metadata or {}
    codes = _fixed_list_numpy(table["vector"], np.int8)
    scale = np.asarray(table["scale"].combine_chunks().to_numpy(zero_copy_only=False), dtype=np.float32)
    sketch_rows = _fixed_list_numpy(table["sketch"], np.float32)
    dim, width = codes.shape[1], sketch_rows.shape[1]
    mean = np.frombuffer(meta[MEAN_KEY], dtype=np.float32)
    basis = np.frombuffer(meta[BASIS_KEY], dtype=np.float32).reshape(dim, width)
    return MappedVectors(table, codes, scale, (mean, basis, sketch_rows))


def covered_paths(path: Path) -> set[str]:
    """The distinct note paths of an embedding file."""
    mapped = map_vectors(path)
    col = mapped.table["path"].combine_chunks()
    if isinstance(col, pa.DictionaryArray):
        return {str(p) for p in col.dictionary.to_pylist()}
    return {str(p) for p in pc.unique(col).to_pylist()}


def read_vectors(path: Path, shas: set[str] | None = None) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """(path, chunk_ordinal, text_sha) rows, their (n, dim) int8 codes and (n,) scales,
    from a Parquet or an Arrow embedding file.

    With `shas`, only the rows whose passage hash is among them (cache look-ups).
    """
    path = Path(path)
    if path.suffix == ".arrow":
        mapped = map_vectors(path)
        table, codes, scale = (
            mapped.table.select(["path", "chunk_ordinal", "text_sha"]),
            mapped.codes,
            mapped.scale,
        )
        path_col = table["path"].combine_chunks()
        if isinstance(path_col, pa.DictionaryArray):
            table = table.set_column(0, "path", path_col.cast(pa.string()))
        if shas is not None:
            mask = pc.is_in(table["text_sha"], value_set=pa.array(sorted(shas), pa.string()))
            keep = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
            return table.filter(mask), codes[keep], scale[keep]
        return table, codes, scale
    table = pq.read_table(path)
    if shas is not None:
        table = table.filter(pc.is_in(table["text_sha"], value_set=pa.array(sorted(shas), pa.string())))
    codes = _fixed_list_numpy(table["vector"], np.int8)
    scale = np.asarray(table["scale"].to_numpy(zero_copy_only=False), dtype=np.float32)
    return table.drop_columns(["vector", "scale"]), codes, scale
