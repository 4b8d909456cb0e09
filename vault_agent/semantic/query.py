"""Query side: exact cosine top-k over one snapshot's note vectors, and its lag.

A snapshot's vectors are the live rows of its segments' embedding files (same liveness
rule as every table: a segment's own tombstones, and paths a newer segment holds), stacked
once per snapshot into one float32 matrix (512 floats per note: 205 MB at 100k notes) and
kept for the two newest snapshots. Per-file arrays are cached by file name (immutable),
so an embedding commit that adds one file re-reads only that file. A query embeds the
question (~2–4 ms) and scores every note with one matrix-vector product (exact, no ANN:
~5 ms at 100k notes).

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
class _Vectors:
    paths: list[str]
    ordinals: np.ndarray
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalized


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
    cache = _cache_for(reader)
    with cache.lock:
        hit = cache.snaps.get(manifest.snapshot_id)
        if hit is not None:
            return hit
        seg_dir = _index_dir(reader) / SEGMENTS_DIR
        newer: set[str] = set()
        paths: list[str] = []
        ordinals: list[np.ndarray] = []
        mats: list[np.ndarray] = []
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
                    keep = [i for i, p in enumerate(rows[0]) if p not in dead] if dead else None
                    if keep is None:
                        paths += rows[0]
                        ordinals.append(rows[1])
                        mats.append(rows[2])
                    else:
                        paths += [rows[0][i] for i in keep]
                        ordinals.append(rows[1][keep])
                        mats.append(rows[2][keep])
            newer |= held
        dim = mats[0].shape[1] if mats else 0
        vectors = _Vectors(
            paths,
            np.concatenate(ordinals) if ordinals else np.zeros(0, np.int32),
            np.vstack(mats) if mats else np.zeros((0, dim), np.float32),
        )
        cache.snaps[manifest.snapshot_id] = vectors
        for sid in sorted(cache.snaps)[:-KEEP_SNAPSHOTS]:
            del cache.snaps[sid]
        live_files = {s.files.get(TABLE) for s in manifest.segments}
        for name in [n for n in cache.files if n not in live_files]:
            del cache.files[name]  # immutable, but no newer snapshot names it
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
    n = len(vectors.paths)
    if n == 0:
        return None
    scores = vectors.matrix @ encoder.embed_query(query)
    take = min(k, n)
    top = np.argpartition(-scores, take - 1)[:take] if take < n else np.arange(n)
    ranked = sorted(
        ((round(float(scores[i]), 6), vectors.paths[i], int(vectors.ordinals[i])) for i in top),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    return [(path, ordinal, score) for score, path, ordinal in ranked]


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
