"""Hybrid ranking: reciprocal rank fusion of a lexical and a semantic ranked list.

score(d) = Σ over lists L holding d of  w_L / (RRF_K + rank_L(d)),  rank 1-based,
           + LEXICAL_TOP_BONUS when d is the lexical list's first hit.

Why RRF and not a score blend: BM25 scores are unbounded and query-dependent while cosine
similarities sit in a narrow band, so a linear blend needs per-vault calibration; ranks
need none. RRF_K = 60 is the constant of Cormack et al. (2009); the semantic list gets the
same weight as the lexical one, and only semantic hits within SEMANTIC_MARGIN of the best
cosine count (measured in ops/bench/bench_semantic.py on the dev set, the CJK fixture and
the demo vault: margins 0.1–0.2 form a plateau; 1.5x semantic weight helped
cross-language questions but cost keyword recall@3).
Ties go to the lexical order, then path and chunk ordinal, so answers are byte-stable.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0
# Only semantic hits within this cosine margin of the best one take part. The semantic list
# ranks every note, so without a cut a note that both lists rank mediocrely (a stop-word
# lexical match, a middling cosine) outranks the note only the model found.
SEMANTIC_MARGIN = 0.15
# The lexical list's first hit keeps its place unless both lists agree on another note: a
# query that names a note (its title, file name or alias) is answered best by the engine's
# fielded match, and equal-weight RRF let a semantically close neighbour overtake it
# (title-as-query recall@1 on obsidian-tasks-docs: lexical 0.983, plain RRF 0.822, with this
# bonus 0.983; dev-set recall@3 0.800 -> 0.833, paraphrase recall@10 unchanged at 0.8;
# measured with ops/bench/bench_retrieval.py --embed). 0.02 exceeds one RRF rank-1 share
# (1/61), less than two.
LEXICAL_TOP_BONUS = 0.02

Hit = tuple[str, int, float]  # (path, chunk ordinal, score)

__all__ = ["LEXICAL_TOP_BONUS", "RRF_K", "SEMANTIC_MARGIN", "Hit", "fuse"]


def fuse(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit] | None,
    k: int,
    *,
    rrf_k: int = RRF_K,
    lexical_weight: float = LEXICAL_WEIGHT,
    semantic_weight: float = SEMANTIC_WEIGHT,
    semantic_margin: float | None = SEMANTIC_MARGIN,
) -> list[Hit]:
    """The top `k` (path, chunk ordinal, fused score) of both lists, best first.

    `lexical` and `semantic` are ranked best first; a chunk in both lists adds both
    contributions. With no semantic list the lexical one comes back unchanged (cut to k).
    """
    if k <= 0:
        return []
    if not semantic:
        return list(lexical[:k])
    if semantic_margin is not None:
        floor = semantic[0][2] - semantic_margin
        semantic = [hit for hit in semantic if hit[2] >= floor]
    scores: dict[tuple[str, int], float] = {}
    first_seen: dict[tuple[str, int], int] = {}
    best_chunk: dict[str, tuple[str, int]] = {}  # path → its best lexical chunk
    for rank, (path, ordinal, _) in enumerate(lexical, start=1):
        key = (path, ordinal)
        scores[key] = scores.get(key, 0.0) + lexical_weight / (rrf_k + rank)
        first_seen.setdefault(key, len(first_seen))
        best_chunk.setdefault(path, key)
    if lexical:
        top = (lexical[0][0], lexical[0][1])
        scores[top] += LEXICAL_TOP_BONUS
    for rank, (path, ordinal, _) in enumerate(semantic, start=1):
        # Semantic hits are note-level evidence (one vector per note): they lift the note's
        # best lexical chunk, or stand on the note's first chunk when lexical missed it.
        key = best_chunk.get(path, (path, ordinal))
        scores[key] = scores.get(key, 0.0) + semantic_weight / (rrf_k + rank)
        first_seen.setdefault(key, len(first_seen))
    order = sorted(scores, key=lambda key: (-round(scores[key], 9), first_seen[key], key))
    return [(path, ordinal, round(scores[(path, ordinal)], 6)) for path, ordinal in order[:k]]
