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
Adaptive (fuse_adaptive, what search uses): the bonus is kept only when the query names
the lexical first note (evidence.names_note); a query that describes a note in other words
gets no bonus and a 1.5x semantic weight (measured: DESCRIBED_SEMANTIC_WEIGHT).
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

# When the query does not name the lexical first note (evidence.names_note) it describes
# a note in other words: the lexical first hit loses its bonus and the semantic list
# weighs 1.5x. Measured with ops/bench/bench_granularity.py on paraphrase-dev.json and
# confirmed on paraphrase-holdout.json: paraphrase recall@1 .288 → .356 (dev) and
# .323 → .468 (held-out), recall@5 .729 → .729 and .677 → .694; title-as-query r@1 .976 →
# .978, dev keyword r@1/3 unchanged (.773/.909). Weight 1.0: held-out r@1 .452; 2.0: no
# better, keyword r@1 lower in other splits; dropping the bonus for every query (no
# evidence check): title r@1 .835.
DESCRIBED_SEMANTIC_WEIGHT = 1.5
DESCRIBED_BONUS = 0.0

Hit = tuple[str, int, float]  # (path, chunk ordinal, score)

__all__ = ["DESCRIBED_SEMANTIC_WEIGHT", "LEXICAL_TOP_BONUS", "RRF_K", "SEMANTIC_MARGIN", "Hit", "fuse", "fuse_adaptive"]


def fuse(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit] | None,
    k: int,
    *,
    rrf_k: int = RRF_K,
    lexical_weight: float = LEXICAL_WEIGHT,
    semantic_weight: float = SEMANTIC_WEIGHT,
    semantic_margin: float | None = SEMANTIC_MARGIN,
    lexical_top_bonus: float = LEXICAL_TOP_BONUS,
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
    if lexical and lexical_top_bonus:
        top = (lexical[0][0], lexical[0][1])
        scores[top] += lexical_top_bonus
    for rank, (path, ordinal, _) in enumerate(semantic, start=1):
        # Semantic hits are note-level evidence (one vector per note): they lift the note's
        # best lexical chunk, or stand on the note's first chunk when lexical missed it.
        key = best_chunk.get(path, (path, ordinal))
        scores[key] = scores.get(key, 0.0) + semantic_weight / (rrf_k + rank)
        first_seen.setdefault(key, len(first_seen))
    order = sorted(scores, key=lambda key: (-round(scores[key], 9), first_seen[key], key))
    return [(path, ordinal, round(scores[(path, ordinal)], 6)) for path, ordinal in order[:k]]


def fuse_adaptive(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit] | None,
    k: int,
    names_top: bool,
    *,
    described_semantic_weight: float = DESCRIBED_SEMANTIC_WEIGHT,
    described_bonus: float = DESCRIBED_BONUS,
) -> list[Hit]:
    """`fuse`, adapted to the lexical evidence: when the query names the lexical first
    note (`names_top`, evidence.name_overlap), plain `fuse` (its first hit keeps its
    place); otherwise the query describes a note in other words and the lexical first
    hit gets no bonus, the semantic list `described_semantic_weight`."""
    if names_top:
        return fuse(lexical, semantic, k)
    return fuse(
        lexical,
        semantic,
        k,
        semantic_weight=described_semantic_weight,
        lexical_top_bonus=described_bonus,
    )
