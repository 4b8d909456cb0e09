"""Query side: cosine top-k over one snapshot's passage vectors, and its lag.

A snapshot's vectors are the live rows of its segments' embedding files (same liveness
rule as every table: a segment's own tombstones, and paths a newer segment holds), held
per embedding file as a compact VectorBlock (vectors.py: int8 codes, a scale and a float32
sketch, ~1 KB a passage), cached by file name (immutable) and shared by the two newest
snapshots, so an embedding commit that adds one file reads only that file and no vector is
held twice. A query embeds the question (~3 ms), finds candidates by the sketch, rescores
them exactly, and ranks notes by their best passage (max-sim): a hit points at the chunk
of that passage.

Call from search (one snapshot per answer: pass the request's pinned view):

    hits = semantic_hits(reader, view, query, k)      # None: no vectors or no model
    warnings += semantic_warnings(reader, view)       # SEMANTIC_PENDING / _UNAVAILABLE
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.config import Settings
from vault_agent.contracts import SEGMENTS_DIR, Manifest, WarningItem
from vault_agent.heap import release_free_memory
from vault_agent.per_owner import PerOwner
from vault_agent.semantic.encoder import MODEL_ID, load_encoder, load_error
from vault_agent.semantic.passages import MAX_SECTIONS
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.store import TABLE, file_model, read_vectors
from vault_agent.semantic.vectors import VectorBlock, search


# What this module needs of the query side's snapshot reader and pinned view (semantic may
# not import `query`: tests/kernel/test_boundaries.py); SettingsSource/PinnedManifest fit.
class SettingsSource(Protocol):
    @property
    def settings(self) -> Settings: ...


class PinnedManifest(Protocol):
    @property
    def manifest(self) -> Manifest: ...


KEEP_SNAPSHOTS = 2
PASSAGES_PER_NOTE = 1 + MAX_SECTIONS  # the note passage and its section passages

__all__ = ["SemanticHits", "SemanticState", "semantic_hits", "semantic_search", "semantic_state", "semantic_warnings"]


@dataclass
class _File:
    """One embedding file in memory: row → note (an index into `paths`), chunk, vector."""

    paths: list[str]  # distinct note paths of the file
    note: np.ndarray  # (n,) int32 index into paths
    ordinals: np.ndarray  # (n,) int32
    block: VectorBlock


@dataclass
class _Part:
    """One embedding file as a snapshot sees it: `live` selects its live rows."""

    file: _File
    live: np.ndarray | None  # row indices still live in this snapshot (None: all)

    @property
    def rows(self) -> int:
        return len(self.file.note) if self.live is None else len(self.live)


@dataclass
class _Vectors:
    parts: list[_Part]

    @property
    def count(self) -> int:
        return sum(p.rows for p in self.parts)


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: dict[str, _File] = field(default_factory=dict)
    held: dict[int, frozenset[str]] = field(default_factory=dict)  # segment id → its note paths
    snaps: dict[int, _Vectors] = field(default_factory=dict)


_caches: PerOwner[_Cache] = PerOwner(_Cache)


def _cache_for(reader: SettingsSource) -> _Cache:
    return _caches.of(reader)


def _index_dir(reader: SettingsSource) -> Path:
    return Path(reader.settings.index_dir)


def _read_file(path: Path) -> _File:
    table, codes, scale = read_vectors(path)
    encoded = table["path"].combine_chunks().dictionary_encode()
    assert isinstance(encoded, pa.DictionaryArray)
    return _File(
        paths=[sys.intern(str(p)) for p in encoded.dictionary.to_pylist()],  # shared with `held`
        note=np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int32),
        ordinals=np.asarray(table["chunk_ordinal"].to_numpy(zero_copy_only=False), dtype=np.int32),
        block=VectorBlock.build(codes, scale),
    )


def _load(reader: SettingsSource, manifest: Manifest, model: str) -> _Vectors:
    """The snapshot's vectors: one block per embedding file (each held once in memory,
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
                # Interned: the same strings as the embedding file's paths (10 MB at 100k notes).
                held = cache.held[seg.segment_id] = frozenset(sys.intern(p) for p in col.to_pylist())
            name = seg.files.get(TABLE)
            if name is not None:
                loaded = cache.files.get(name)
                if loaded is None and file_model(seg_dir / name) == model:
                    loaded = cache.files[name] = _read_file(seg_dir / name)
                if loaded is not None:
                    dead = (held & newer) | set(seg.deleted)
                    live = None
                    if dead:
                        alive = np.array([p not in dead for p in loaded.paths], dtype=bool)
                        live = np.flatnonzero(alive[loaded.note])
                    parts.append(_Part(loaded, live))
            newer |= held
        vectors = _Vectors(parts)
        release_free_memory()  # the files' decoding and subspace transients are freed by now
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


def _allowed_rows(part: _Part, allowed: frozenset[str] | None) -> np.ndarray | None:
    """The part's live rows, restricted to notes in `allowed` (None: no restriction)."""
    if allowed is None:
        return part.live
    keep = np.fromiter((p in allowed for p in part.file.paths), dtype=bool, count=len(part.file.paths))
    rows = np.flatnonzero(keep[part.file.note])
    return rows if part.live is None else np.intersect1d(rows, part.live, assume_unique=True)


@dataclass
class SemanticHits:
    """A snapshot's top notes for a query: `hits` (path, chunk ordinal of the best passage,
    cosine), best first, one per note; `vectors[i]` the unit vector of hit i's passage
    (fusion compares them to find copies of one note)."""

    hits: list[tuple[str, int, float]]
    vectors: np.ndarray


def semantic_search(
    reader: SettingsSource, view: PinnedManifest, query: str, k: int, allowed: frozenset[str] | None = None
) -> SemanticHits | None:
    """Top `k` notes of the pinned snapshot, with their vectors (see SemanticHits); with
    `allowed`, among those notes only (a search filter: the candidates are narrowed before
    ranking, not after).

    None when there is nothing to rank with: semantic search off, the model failed to
    load, or the snapshot has no embeddings yet (the caller stays lexical). Ties go to
    path, then chunk ordinal.
    """
    if not semantic_enabled() or k <= 0 or load_error() is not None:
        return None
    # The vectors before the model: their first load runs an SVD per embedding file (a
    # ~100 MB transient), which then does not stack on the model's ~90 MB (issue 11).
    vectors = _load(reader, view.manifest, MODEL_ID)
    encoder = load_encoder()
    if encoder is None:  # the model failed to load: nothing will use the vectors
        _caches.drop(reader)
        return None
    if vectors.count == 0:
        return None
    q = encoder.embed_query(query)
    pairs = [(p, _allowed_rows(p, allowed)) for p in vectors.parts if p.rows]
    pairs = [(p, rows) for p, rows in pairs if rows is None or len(rows)]
    live = [p for p, _ in pairs]
    found = [(i, rows, np.round(scores, 6)) for i, rows, scores in search([(p.file.block, r) for p, r in pairs], q)]
    # A note has at most PASSAGES_PER_NOTE passages, so its best k notes lie among the best
    # k * PASSAGES_PER_NOTE rows: only those (and rows tied with the last) go through the
    # per-row Python loop below (4,000 candidates cost ~13 ms of CPU there; 50 rows, ~0.2).
    keep = k * PASSAGES_PER_NOTE
    flat = np.concatenate([scores for _, _, scores in found]) if found else np.zeros(0, np.float32)
    floor = -np.inf if len(flat) <= keep else float(np.partition(flat, len(flat) - keep)[len(flat) - keep])
    best: dict[str, tuple[float, int, int, int]] = {}  # path → (cosine, ordinal, part, row)
    for i, rows, scores in found:
        file = live[i].file
        sel = scores >= floor
        for row, score in zip(rows[sel].tolist(), scores[sel].tolist(), strict=True):
            path = file.paths[int(file.note[row])]
            ordinal = int(file.ordinals[row])
            old = best.get(path)
            if old is None or (-score, ordinal) < (-old[0], old[1]):  # a note's best passage
                best[path] = (score, ordinal, i, row)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0], kv[1][1]))[:k]
    vecs = np.zeros((len(ranked), encoder.dim), np.float32)
    for j, (_, (_, _, i, row)) in enumerate(ranked):
        block = live[i].file.block
        v = block.codes[row].astype(np.float32) * block.scale[row]
        vecs[j] = v / max(float(np.linalg.norm(v)), 1e-9)
    return SemanticHits([(path, ordinal, score) for path, (score, ordinal, _, _) in ranked], vecs)


def semantic_hits(
    reader: SettingsSource, view: PinnedManifest, query: str, k: int, allowed: frozenset[str] | None = None
) -> list[tuple[str, int, float]] | None:
    """Top `k` notes of the pinned snapshot as (path, chunk ordinal of the best passage,
    cosine), best first, one hit per note (semantic_search without the vectors)."""
    found = semantic_search(reader, view, query, k, allowed)
    return None if found is None else found.hits


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


def semantic_warnings(reader: SettingsSource, view: PinnedManifest) -> list[WarningItem]:
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
