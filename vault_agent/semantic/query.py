"""Query side: cosine top-k over one snapshot's passage vectors.

The vectors are the live rows of the snapshot's embedding files (snapshot_vectors.py:
mapped from disk, cached per file and shared by the newest snapshots). A query embeds the
question (~3 ms), finds candidates by the sketch, rescores them exactly, and ranks notes
by their best passage (max-sim): a hit points at the chunk of that passage.

Call from search (one snapshot per answer: pass the request's pinned view):

    found = semantic_search(reader, view, query, k)   # None: no vectors or no model
    warnings += semantic_warnings(reader, view)       # progress.py: SEMANTIC_PENDING / _OFF / _UNAVAILABLE
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vault_agent.semantic.encoder import active_model, load_encoder, load_error
from vault_agent.semantic.passages import MAX_SECTIONS
from vault_agent.semantic.ports import PinnedManifest, SettingsSource
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.snapshot_vectors import FilePart, forget_reader, snapshot_vectors
from vault_agent.semantic.vectors import search

PASSAGES_PER_NOTE = 1 + MAX_SECTIONS  # the note passage and its section passages

__all__ = ["SemanticHits", "semantic_search"]


def _allowed_rows(part: FilePart, allowed: frozenset[str] | None) -> np.ndarray | None:
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
    model = active_model().model_id
    if not semantic_enabled() or k <= 0 or load_error() is not None or model is None:
        return None
    # The vectors before the model: a file without its mapped twin (older versions) is
    # decoded and its sketch computed (an SVD, a ~100 MB transient at 100k notes), which
    # then does not stack on the model's ~90 MB (issue 11).
    vectors = snapshot_vectors(reader, view.manifest, model)
    encoder = load_encoder()
    if encoder is None:  # the model failed to load: nothing will use the vectors
        forget_reader(reader)
        return None
    if vectors.count == 0:
        return None
    q = encoder.embed_query(query)
    pairs = [(p, _allowed_rows(p, allowed)) for p in vectors.parts if p.rows]
    pairs = [(p, rows) for p, rows in pairs if rows is None or len(rows)]
    live = [p for p, _ in pairs]
    found = [
        (i, rows, np.round(scores, 6)) for i, rows, scores in search([(p.file.block, r) for p, r in pairs], q)
    ]
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
