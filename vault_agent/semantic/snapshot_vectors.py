"""A snapshot's passage vectors as the query side holds them (reader side).

A snapshot's vectors are the live rows of its segments' embedding files (same liveness
rule as every table: a segment's own tombstones, and paths a newer segment holds), held
per embedding file as a compact VectorBlock (vectors.py), cached by file name (files are
immutable) and shared by the KEEP_SNAPSHOTS newest snapshots, so an embedding commit that
adds one file reads only that file and no vector is held twice.

A file written by this version (`_vec` and partial files, store.py) is memory-mapped with
its sketch: loading it costs no decoding and no SVD, so a fresh process answers its first
semantic query in milliseconds, and the vectors are page-cache pages rather than process
heap. A complete Parquet file without its twin (older versions) is decoded and its sketch
computed, as before.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest
from vault_agent.heap import release_free_memory
from vault_agent.per_owner import PerOwner
from vault_agent.semantic.ports import SettingsSource
from vault_agent.semantic.store import TABLE, embedding_keys, file_model, map_vectors
from vault_agent.semantic.vectors import VectorBlock

KEEP_SNAPSHOTS = 2

__all__ = [
    "KEEP_SNAPSHOTS",
    "EmbeddingFile",
    "FilePart",
    "SnapshotVectors",
    "forget_reader",
    "snapshot_vectors",
    "warm_vectors",
]


@dataclass
class EmbeddingFile:
    """One embedding file in memory: row → note (an index into `paths`), chunk, vector."""

    paths: list[str]  # distinct note paths of the file
    note: np.ndarray  # (n,) int32 index into paths
    ordinals: np.ndarray  # (n,) int32
    block: VectorBlock


@dataclass
class FilePart:
    """One embedding file as a snapshot sees it: `live` selects its live rows."""

    file: EmbeddingFile
    live: np.ndarray | None  # row indices still live in this snapshot (None: all)

    @property
    def rows(self) -> int:
        return len(self.file.note) if self.live is None else len(self.live)


@dataclass
class SnapshotVectors:
    parts: list[FilePart]

    @property
    def count(self) -> int:
        return sum(p.rows for p in self.parts)


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: dict[str, EmbeddingFile] = field(default_factory=dict)
    held: dict[int, frozenset[str]] = field(default_factory=dict)  # segment id → its note paths
    snaps: dict[int, SnapshotVectors] = field(default_factory=dict)
    model: str | None = None  # the model of the vectors asked for (warm_vectors reuses it)


def _forget(cache: _Cache, snapshots: set[int], segments: set[int]) -> None:
    with cache.lock:
        for sid in [s for s in cache.snaps if s not in snapshots]:
            del cache.snaps[sid]
        kept = {id(part.file) for snap in cache.snaps.values() for part in snap.parts}
        for name in [n for n, f in cache.files.items() if id(f) not in kept]:
            del cache.files[name]
        for seg_id in [s for s in cache.held if s not in segments]:
            del cache.held[seg_id]


_caches: PerOwner[_Cache] = PerOwner(_Cache, _forget)


def _cache_for(reader: SettingsSource) -> _Cache:
    return _caches.of(reader)


def warm_vectors(reader: SettingsSource, manifest: Manifest) -> None:
    """A new snapshot's vectors now, when this reader's semantic search is in use: the
    snapshot reader calls it on its background thread after each preload, so the first
    search after a commit does not read the commit's new embedding files itself."""
    cache = _caches.get(reader)
    model = cache.model if cache is not None else None
    if model is not None:
        snapshot_vectors(reader, manifest, model)


def forget_reader(reader: SettingsSource) -> None:
    """Drop a reader's vectors (nothing will use them: the model failed to load)."""
    _caches.drop(reader)


def _read_file(path: Path) -> EmbeddingFile:
    mapped = map_vectors(path)
    column = mapped.table["path"].combine_chunks()
    encoded = column if isinstance(column, pa.DictionaryArray) else column.dictionary_encode()
    assert isinstance(encoded, pa.DictionaryArray)
    if mapped.sketch is not None:
        mean, basis, sketch = mapped.sketch
        block = VectorBlock(mapped.codes, mapped.scale, mean, basis, sketch)
    else:
        block = VectorBlock.build(mapped.codes, mapped.scale)
    return EmbeddingFile(
        paths=[sys.intern(str(p)) for p in encoded.dictionary.to_pylist()],  # shared with `held`
        note=np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int32),
        ordinals=np.asarray(mapped.table["chunk_ordinal"].to_numpy(), dtype=np.int32),
        block=block,
    )


def snapshot_vectors(reader: SettingsSource, manifest: Manifest, model: str) -> SnapshotVectors:
    """The snapshot's vectors of `model`: one block per embedding file (each held once in
    memory, shared by the snapshots that name it), with the live rows of this snapshot.

    `reader` keys the cache (one per snapshot reader) and gives the state dir."""
    cache = _cache_for(reader)
    with cache.lock:
        cache.model = model
        hit = cache.snaps.get(manifest.snapshot_id)
        if hit is not None:
            return hit
        seg_dir = Path(reader.settings.index_dir) / SEGMENTS_DIR
        newer: set[str] = set()
        parts: list[FilePart] = []
        grew = False
        for seg in sorted(manifest.segments, key=lambda s: s.segment_id, reverse=True):
            held = cache.held.get(seg.segment_id)
            if held is None:
                col = pq.read_table(seg_dir / seg.files["notes"], columns=["path"])["path"]
                # Interned: the same strings as the embedding file's paths (10 MB at 100k notes).
                held = cache.held[seg.segment_id] = frozenset(sys.intern(p) for p in col.to_pylist())
            complete_ok = TABLE in seg.files and file_model(seg_dir / seg.files[TABLE]) == model
            for key in embedding_keys(seg.files, complete_ok=complete_ok):
                name = seg.files[key]
                loaded = cache.files.get(name)
                if loaded is None and file_model(seg_dir / name) == model:
                    loaded = cache.files[name] = _read_file(seg_dir / name)
                    grew = grew or not name.endswith(".arrow")  # decoded, with an SVD's transients
                if loaded is None:
                    continue
                dead = (held & newer) | set(seg.deleted)
                live = None
                if dead:
                    alive = np.array([p not in dead for p in loaded.paths], dtype=bool)
                    live = np.flatnonzero(alive[loaded.note])
                parts.append(FilePart(loaded, live))
            newer |= held
        vectors = SnapshotVectors(parts)
        if grew:
            release_free_memory()  # a decoded file's transients are freed by now
        cache.snaps[manifest.snapshot_id] = vectors
        for sid in sorted(cache.snaps)[:-KEEP_SNAPSHOTS]:
            del cache.snaps[sid]
        kept = {id(part.file) for snap in cache.snaps.values() for part in snap.parts}
        for name in [n for n, f in cache.files.items() if id(f) not in kept]:
            del cache.files[name]  # no kept snapshot uses it any more
        live_segs = {s.segment_id for s in manifest.segments}
        for sid in [s for s in cache.held if s not in live_segs]:
            del cache.held[sid]
        return vectors
