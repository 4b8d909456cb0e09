"""Query side: cosine top-k over one snapshot's passage vectors.

The vectors are the live rows of the snapshot's embedding files (snapshot_vectors.py:
mapped from disk, cached per file and shared by the newest snapshots). A query embeds the
question (~3 ms), finds candidates by the sketch, rescores them exactly, and ranks notes
by their best passage (max-sim): a hit points at the chunk of that passage.

Call from search (one snapshot per answer: pass the request's pinned view):

    hits = semantic_hits(reader, view, query, k)      # None: no vectors or no model
    warnings += semantic_warnings(reader, view)       # progress.py: SEMANTIC_PENDING / _OFF / _UNAVAILABLE
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vault_agent.semantic.encoder import MODEL_ID, load_encoder, load_error
from vault_agent.semantic.passages import MAX_SECTIONS
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.snapshot_vectors import forget_reader, snapshot_vectors
from vault_agent.semantic.vectors import search

PASSAGES_PER_NOTE = 1 + MAX_SECTIONS  # the note passage and its section passages

__all__ = ["semantic_hits"]


def semantic_hits(reader: Any, view: Any, query: str, k: int) -> list[tuple[str, int, float]] | None:
    """Top `k` notes of the pinned snapshot as (path, chunk ordinal of the best passage,
    cosine), best first, one hit per note.

    None when there is nothing to rank with: semantic search off, the model failed to
    load, or the snapshot has no embeddings yet (the caller stays lexical). Ties go to
    path, then chunk ordinal.
    """
    if not semantic_enabled() or k <= 0 or load_error() is not None:
        return None
    # The vectors before the model: a file without its mapped twin (older versions) is
    # decoded and its sketch computed (an SVD, a ~100 MB transient at 100k notes), which
    # then does not stack on the model's ~90 MB (issue 11).
    vectors = snapshot_vectors(reader, view.manifest, MODEL_ID)
    encoder = load_encoder()
    if encoder is None:  # the model failed to load: nothing will use the vectors
        forget_reader(reader)
        return None
    if vectors.count == 0:
        return None
    q = encoder.embed_query(query)
    live = [p for p in vectors.parts if p.rows]
    found = [(i, rows, np.round(scores, 6)) for i, rows, scores in search([(p.file.block, p.live) for p in live], q)]
    # A note has at most PASSAGES_PER_NOTE passages, so its best k notes lie among the best
    # k * PASSAGES_PER_NOTE rows: only those (and rows tied with the last) go through the
    # per-row Python loop below (4,000 candidates cost ~13 ms of CPU there; 50 rows, ~0.2).
    keep = k * PASSAGES_PER_NOTE
    flat = np.concatenate([scores for _, _, scores in found]) if found else np.zeros(0, np.float32)
    floor = -np.inf if len(flat) <= keep else float(np.partition(flat, len(flat) - keep)[len(flat) - keep])
    best: dict[str, tuple[float, int]] = {}
    for i, rows, scores in found:
        file = live[i].file
        sel = scores >= floor
        for row, score in zip(rows[sel].tolist(), scores[sel].tolist(), strict=True):
            path = file.paths[int(file.note[row])]
            ordinal = int(file.ordinals[row])
            old = best.get(path)
            if old is None or (-score, ordinal) < (-old[0], old[1]):  # a note's best passage
                best[path] = (score, ordinal)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0], kv[1][1]))[:k]
    return [(path, ordinal, score) for path, (score, ordinal) in ranked]
