"""Query side: exact cosine top-k over one snapshot's note vectors, and its lag.

A snapshot's vectors are the live rows of its segments' embedding files (same liveness
rule as every table: a segment's own tombstones, and paths a newer segment holds), held as
one float32 matrix per embedding file (512 floats per note: 205 MB at 100k notes), cached
by file name (immutable) and shared by the two newest snapshots, so an embedding commit
that adds one file reads only that file and no vector is held twice. A query embeds the
question (~2–4 ms) and scores every note with matrix-vector products (exact, no ANN:
~15 ms of CPU at 100k notes, memory-bound).

Call from search (one snapshot per answer: pass the request's pinned view):

    hits = semantic_hits(reader, view, query, k)      # None: no vectors or no model
    warnings += semantic_warnings(reader, view)       # SEMANTIC_PENDING / _UNAVAILABLE
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest, WarningItem
from vault_agent.semantic.encoder import load_encoder, load_error
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.store import TABLE, file_model, read_vectors

KEEP_SNAPSHOTS = 2

__all__ = ["SemanticState", "semantic_hits", "semantic_state", "semantic_warnings"]


@dataclass
class _Part:
    """One embedding file's rows as a snapshot sees them: `live` selects its live rows."""

    paths: list[str]
    ordinals: np.ndarray
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalized; shared by every snapshot
    live: np.ndarray | None  # row indices still live in this snapshot (None: all)


@dataclass
class _Vectors:
    parts: list[_Part]

    @property
    def count(self) -> int:
        return sum(len(p.paths) if p.live is None else len(p.live) for p in self.parts)


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = field(default_factory=dict)
    held: dict[int, frozenset[str]] = field(default_factory=dict)  # segment id → its note paths
    snaps: dict[int, _Vectors] = field(default_factory=dict)


_caches: weakref.WeakKeyDictionary[Any, _Cache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache_for(reader: Any) -> _Cache:
    with _caches_lock:
        cache = _caches.get(reader)
        if cache is None:
            cache = _caches[reader] = _Cache()
        return cache


def _index_dir(reader: Any) -> Path:
    return Path(reader.settings.index_dir)


def _load(reader: Any, manifest: Manifest, model: str) -> _Vectors:
    """The snapshot's vectors: one matrix per embedding file (each held once in memory,
    shared by the snapshots that name it), with the live rows of this snapshot."""
    cache = _cache_for(reader)
    with cache.lock:
        hit = cache.snaps.get(manifest.snapshot_id)
        if hit is not None:
            return hit
        seg_dir = _index_dir(reader) / SEGMENTS_DIR
        newer: set[str] = set()
        parts: list[_Part] = []
        for seg in sorted(manifest.segments, key=lambda s: s.segment_id, reverse=True):
            held = cache.held.get(seg.segment_id)
            if held is None:
                col = pq.read_table(seg_dir / seg.files["notes"], columns=["path"])["path"]
                held = cache.held[seg.segment_id] = frozenset(col.to_pylist())
            name = seg.files.get(TABLE)
            if name is not None:
                rows = cache.files.get(name)
                if rows is None and file_model(seg_dir / name) == model:
                    table, vecs = read_vectors(seg_dir / name)
                    rows = (table["path"].to_pylist(), table["chunk_ordinal"].to_numpy(), vecs)
                    cache.files[name] = rows
                if rows is not None:
                    dead = (held & newer) | set(seg.deleted)
                    live = (
                        np.array([i for i, p in enumerate(rows[0]) if p not in dead], dtype=np.int64)
                        if dead
                        else None
                    )
                    parts.append(_Part(rows[0], rows[1], rows[2], live))
            newer |= held
        vectors = _Vectors(parts)
        cache.snaps[manifest.snapshot_id] = vectors
        for sid in sorted(cache.snaps)[:-KEEP_SNAPSHOTS]:
            del cache.snaps[sid]
        kept = {id(part.matrix) for snap in cache.snaps.values() for part in snap.parts}
        for name in [n for n, rows in cache.files.items() if id(rows[2]) not in kept]:
            del cache.files[name]  # no kept snapshot uses it any more
        live_segs = {s.segment_id for s in manifest.segments}
        for sid in [s for s in cache.held if s not in live_segs]:
            del cache.held[sid]
        return vectors


def semantic_hits(reader: Any, view: Any, query: str, k: int) -> list[tuple[str, int, float]] | None:
    """Top `k` (path, chunk ordinal, cosine) of the pinned snapshot, best first.

    None when there is nothing to rank with: semantic search off, the model failed to
    load, or the snapshot has no embeddings yet (the caller stays lexical). Ties go to
    path, then chunk ordinal.
    """
    if not semantic_enabled() or k <= 0:
        return None
    encoder = load_encoder()
    if encoder is None:
        return None
    vectors = _load(reader, view.manifest, encoder.model_id)
    if vectors.count == 0:
        return None
    q = encoder.embed_query(query)
    candidates: list[tuple[float, str, int]] = []
    for part in vectors.parts:
        # The whole file in one pass, dead rows dropped after: no copy of the matrix
        # (compaction rewrites segments whose tombstones pass 30%, bounding the waste).
        scores = part.matrix @ q
        index = np.arange(len(part.paths)) if part.live is None else part.live
        if part.live is not None:
            scores = scores[part.live]
        take = min(k, len(scores))
        if take == 0:
            continue
        top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(len(scores))
        for i in top:
            row = int(index[i])
            candidates.append((round(float(scores[i]), 6), part.paths[row], int(part.ordinals[row])))
    candidates.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [(path, ordinal, score) for score, path, ordinal in candidates[:k]]


@dataclass(frozen=True)
class SemanticState:
    enabled: bool
    model_ok: bool
    embedded_notes: int
    live_notes: int

    @property
    def share(self) -> float:
        return 1.0 if self.live_notes == 0 else round(self.embedded_notes / self.live_notes, 4)

    @property
    def pending(self) -> bool:
        return self.enabled and self.model_ok and self.embedded_notes < self.live_notes

    @property
    def label(self) -> str:
        """ready | pending | off | unavailable (the model failed to load)."""
        if not self.enabled:
            return "off"
        if not self.model_ok:
            return "unavailable"
        return "pending" if self.pending else "ready"


def semantic_state(manifest: Manifest, *, load_model: bool = True) -> SemanticState:
    """How much of a snapshot is embedded: live notes of segments with an embedding file.

    The writer tombstones a changed note in every older segment, so a segment's live notes
    are its note count minus its tombstones (exact, read from the manifest alone).
    """
    enabled = semantic_enabled()
    model_ok = enabled and (load_encoder() is not None if load_model else load_error() is None)
    live = embedded = 0
    for seg in manifest.segments:
        n = max(seg.note_count - len(seg.deleted), 0)
        live += n
        if TABLE in seg.files:
            embedded += n
    return SemanticState(enabled, model_ok, embedded, live)


def semantic_warnings(reader: Any, view: Any) -> list[WarningItem]:
    """`SEMANTIC_PENDING` while embeddings lag the snapshot; `SEMANTIC_UNAVAILABLE` once
    when the model cannot be loaded (search answers lexically). Nothing when turned off."""
    state = semantic_state(view.manifest)
    if not state.enabled:
        return []
    if not state.model_ok:
        return [
            WarningItem(
                code="SEMANTIC_UNAVAILABLE",
                message="the embedding model could not be loaded; results are lexical only",
            )
        ]
    if state.pending:
        pct = int(state.share * 100)
        return [
            WarningItem(
                code="SEMANTIC_PENDING",
                message=f"embeddings cover {pct}% of notes and are being computed; "
                "semantic ranking is partial until they catch up",
            )
        ]
    return []
