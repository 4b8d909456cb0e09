"""Hybrid ranking: reciprocal rank fusion of a lexical and a semantic ranked list.

score(d) = Σ over lists L holding d of  w_L / (RRF_K + rank_L(d)),  rank 1-based.

Why RRF and not a score blend: BM25 scores are unbounded and query-dependent while cosine
similarities sit in a narrow band, so a linear blend needs per-vault calibration; ranks
need none. RRF_K = 60 is the constant of Cormack et al. (2009); the semantic list gets the
same weight as the lexical one (measured on the dev set in ops/bench/bench_semantic.py:
equal weights were best for paraphrase questions without losing keyword recall@3).
Ties go to the lexical order, then path and chunk ordinal, so answers are byte-stable.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0

Hit = tuple[str, int, float]  # (path, chunk ordinal, score)

__all__ = ["RRF_K", "Hit", "fuse"]


def fuse(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit] | None,
    k: int,
    *,
    rrf_k: int = RRF_K,
    lexical_weight: float = LEXICAL_WEIGHT,
    semantic_weight: float = SEMANTIC_WEIGHT,
) -> list[Hit]:
    """The top `k` (path, chunk ordinal, fused score) of both lists, best first.

    `lexical` and `semantic` are ranked best first; a chunk in both lists adds both
    contributions. With no semantic list the lexical one comes back unchanged (cut to k).
    """
    if k <= 0:
        return []
    if not semantic:
        return list(lexical[:k])
    scores: dict[tuple[str, int], float] = {}
    first_seen: dict[tuple[str, int], int] = {}
    best_chunk: dict[str, tuple[str, int]] = {}  # path → its best lexical chunk
    for rank, (path, ordinal, _) in enumerate(lexical, start=1):
        key = (path, ordinal)
        scores[key] = scores.get(key, 0.0) + lexical_weight / (rrf_k + rank)
        first_seen.setdefault(key, len(first_seen))
        best_chunk.setdefault(path, key)
    for rank, (path, ordinal, _) in enumerate(semantic, start=1):
        # Semantic hits are note-level evidence (one vector per note): they lift the note's
        # best lexical chunk, or stand on the note's first chunk when lexical missed it.
        key = best_chunk.get(path, (path, ordinal))
        scores[key] = scores.get(key, 0.0) + semantic_weight / (rrf_k + rank)
        first_seen.setdefault(key, len(first_seen))
    order = sorted(scores, key=lambda key: (-round(scores[key], 9), first_seen[key], key))
    return [(path, ordinal, round(scores[(path, ordinal)], 6)) for path, ordinal in order[:k]]
