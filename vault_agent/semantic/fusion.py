"""Hybrid ranking: reciprocal rank fusion of a lexical and a semantic ranked list, with
the lexical evidence deciding how much each list may move.

score(d) = Σ over lists L holding d of  w_L / (RRF_K + rank_L(d)),  rank 1-based,
           + LEXICAL_TOP_BONUS when d is the lexical lead and the query is not described.

Rules, in order (each chosen on the dev sets: docs/retrieval.md, docs/benchmarks.md):
1. A locked lead stays first whatever the model says: the lexical first hit when the query
   names it, every term is in its aliases, it holds a quoted phrase, or a keyword query's
   rare word (evidence.lock_reason); or the hit holding a keyword typed exactly where the
   stemmer matched more notes (evidence.exact_lead, `lead`).
2. Only semantic hits within SEMANTIC_MARGIN of the best cosine take part (the semantic
   list ranks every note, so without a cut a note that both lists rank mediocrely beats
   the note only the model found).
3. Weights by query shape: a query that describes a note in other words (`described`: it
   names no note and has evidence.DESCRIBED_MIN_WORDS words or more) weighs the semantic
   list DESCRIBED_SEMANTIC_WEIGHT; a name or a few keywords weigh it SEMANTIC_WEIGHT and
   the lead keeps LEXICAL_TOP_BONUS.
4. Near-duplicates: a hit whose vector is within DUPLICATE_COSINE of a hit ranked above it,
   with no better lexical evidence of its own, is moved below the others (a translated copy
   of the same note: the model puts translations next to each other, the query's words
   tell which copy was asked for; no language is named anywhere).
Why RRF and not a score blend: BM25 scores are unbounded and query-dependent while cosine
similarities sit in a narrow band, so a linear blend needs per-vault calibration; ranks
need none. Ties go to the lexical order, then path and chunk ordinal (byte-stable).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RRF_K = 60
LEXICAL_WEIGHT = 1.0
# The semantic list's weight for a query that names a note or is a few keywords: such a
# query says exactly what it wants, and the model's neighbours of a word or a name are
# noise more often than not; the model may reorder the engine's hits, rarely add to them.
SEMANTIC_WEIGHT = 0.25
# Only semantic hits within this cosine of the best one take part (the semantic list ranks
# every note: without a cut, a note the model ranks mediocrely still outranks lexical hits).
SEMANTIC_MARGIN = 0.07
# The lexical list's first hit keeps its place when the query names it unless both lists
# agree on another note. 0.02 exceeds one RRF rank-1 share (1/61), less than two.
LEXICAL_TOP_BONUS = 0.02
# A query that describes a note in other words (evidence.DESCRIBED_MIN_WORDS words or more,
# naming no note): the lists weigh the same and the lexical first hit gets no bonus.
DESCRIBED_SEMANTIC_WEIGHT = 1.0
DESCRIBED_BONUS = 0.0
# Two notes whose vectors are this close are copies of each other (translations, exports):
# the shipped model's value is its ModelChoice.duplicate_cosine (encoder.py), passed in by search.
DUPLICATE_COSINE = 0.8

Hit = tuple[str, int, float]  # (path, chunk ordinal, score)

__all__ = [
    "DESCRIBED_SEMANTIC_WEIGHT",
    "DUPLICATE_COSINE",
    "LEXICAL_TOP_BONUS",
    "RRF_K",
    "SEMANTIC_MARGIN",
    "HELD_RANK",
    "FusedHit",
    "Pin",
    "Hit",
    "fuse",
    "fuse_explained",
    "rrf",
]


# A pinned note ranks no lower than its place: first for the note the query names (the
# lexical first hit, evidence.names_note), HELD_RANK for the note that alone holds an exact
# rare word or a quoted phrase of the query (search_modes.held_note). At most one of each:
# then a note both lists rank in their top 5 still ends in the top 10 (RRF puts at most 8
# notes above it, and the lexical first note is one of them when there are 8).
HELD_RANK = 3


@dataclass(frozen=True)
class Pin:
    """A note the query's words pin near the top, and why."""

    path: str
    ordinal: int  # the chunk to show when the lexical list does not hold the note
    reason: str  # "title" (first) | "rare" | "quote" | "exact" (top HELD_RANK)
    place: int  # ranks no lower than this (1-based)


@dataclass
class FusedHit:
    """One ranked hit and how fusion placed it (what `search` explains per hit)."""

    path: str
    ordinal: int
    score: float = 0.0
    lexical_rank: int | None = None
    lexical_score: float | None = None
    semantic_rank: int | None = None
    cosine: float | None = None
    lexical_part: float = 0.0
    semantic_part: float = 0.0
    bonus: float = 0.0
    lock: str | None = None  # why a locked lexical first hit kept first place
    duplicate_of: str | None = None
    pinned: str | None = None  # why fusion kept this note at or above its place (Pin.reason)

    @property
    def hit(self) -> Hit:
        return (self.path, self.ordinal, self.score)


def rrf(
    lexical: Sequence[Hit], semantic: Sequence[Hit] | None, k: int, pins: Sequence[Pin] = ()
) -> list[FusedHit]:
    """The top `k` of plain reciprocal rank fusion of both lists (each ranked best first;
    semantic: one hit per note, cosine as score), each hit with its ranks and shares;
    every pinned note at or above its place (pins applied best place first).

    A semantic hit lifts its note's best lexical chunk, else stands on the chunk of the
    note's best passage. Ties: the order first seen (the lexical list, then the semantic
    one), then path and chunk ordinal."""
    if k <= 0:
        return []
    hits: dict[tuple[str, int], FusedHit] = {}
    order: dict[tuple[str, int], int] = {}
    best_chunk: dict[str, tuple[str, int]] = {}  # path → its best lexical chunk

    def entry(key: tuple[str, int]) -> FusedHit:
        if key not in hits:
            hits[key] = FusedHit(*key)
            order[key] = len(order)
        return hits[key]

    for rank, (path, ordinal, score) in enumerate(lexical, start=1):
        h = entry((path, ordinal))
        if h.lexical_rank is None:
            h.lexical_rank, h.lexical_score = rank, score
            h.lexical_part = 1.0 / (RRF_K + rank)
        best_chunk.setdefault(path, (path, ordinal))
    for rank, (path, ordinal, cosine) in enumerate(semantic or (), start=1):
        h = entry(best_chunk.get(path, (path, ordinal)))
        if h.semantic_rank is None:
            h.semantic_rank, h.cosine = rank, cosine
            h.semantic_part = 1.0 / (RRF_K + rank)
    placed = []
    for pin in sorted(pins, key=lambda p: p.place):
        key = best_chunk.get(pin.path, (pin.path, pin.ordinal))
        if entry(key).pinned is None:
            hits[key].pinned = pin.reason
            placed.append((key, pin.place))
    for h in hits.values():
        h.score = round(h.lexical_part + h.semantic_part, 6)
    ranked = sorted(hits, key=lambda key: (-hits[key].score, order[key], key))
    for key, place in placed:
        if ranked.index(key) >= place:
            ranked.remove(key)
            ranked.insert(place - 1, key)
    return [hits[key] for key in ranked[:k]]


def fuse_explained(
    lexical: Sequence[Hit],
    semantic: Sequence[Hit] | None,
    k: int,
    *,
    described: bool = False,
    locked: str | None = None,
    lead: int = 0,
    vectors: np.ndarray | None = None,
    rrf_k: int = RRF_K,
    lexical_weight: float = LEXICAL_WEIGHT,
    semantic_weight: float | None = None,
    semantic_margin: float | None = SEMANTIC_MARGIN,
    lexical_top_bonus: float | None = None,
    duplicate_cosine: float | None = DUPLICATE_COSINE,
) -> list[FusedHit]:
    """The top `k` hits of both lists, best first, each with its evidence.

    `lexical` and `semantic` are ranked best first (semantic: one hit per note, cosine as
    score); `vectors[i]` is the unit vector of `semantic[i]` (None: no duplicate check).
    `described`/`locked` (the lock's reason): the lexical evidence (module doc, rules 1
    and 3); `lead`: the lexical hit the lock and the bonus go to (the engine's first, or
    the one that holds the query's exact form, evidence.exact_lead). With no
    semantic list the lexical one comes back unchanged (cut to k)."""
    if k <= 0:
        return []
    lead = lead if 0 <= lead < len(lexical) else 0
    if not semantic:
        first = [lead] if locked and lexical else []
        return [
            FusedHit(
                lexical[i][0],
                lexical[i][1],
                lexical[i][2],
                lexical_rank=i + 1,
                lexical_score=lexical[i][2],
                lock=locked if first and i == lead else None,
            )
            for i in [*first, *(i for i in range(len(lexical)) if i not in first)][:k]
        ]
    sem_w = (
        semantic_weight
        if semantic_weight is not None
        else (DESCRIBED_SEMANTIC_WEIGHT if described else SEMANTIC_WEIGHT)
    )
    bonus = (
        lexical_top_bonus
        if lexical_top_bonus is not None
        else (DESCRIBED_BONUS if described else LEXICAL_TOP_BONUS)
    )
    floor = semantic[0][2] - semantic_margin if semantic_margin is not None else -np.inf
    hits: dict[tuple[str, int], FusedHit] = {}
    order: dict[tuple[str, int], int] = {}  # first seen: lexical order, then semantic
    best_chunk: dict[str, tuple[str, int]] = {}  # path → its best lexical chunk
    for rank, (path, ordinal, score) in enumerate(lexical, start=1):
        key = (path, ordinal)
        h = hits.setdefault(key, FusedHit(path, ordinal))
        order.setdefault(key, len(order))
        if h.lexical_rank is None:
            h.lexical_rank, h.lexical_score = rank, score
        h.lexical_part += lexical_weight / (rrf_k + rank)
        best_chunk.setdefault(path, key)
    if lexical and bonus:
        hits[(lexical[lead][0], lexical[lead][1])].bonus = bonus
    vec_of: dict[tuple[str, int], np.ndarray] = {}
    for rank, (path, ordinal, cosine) in enumerate(semantic, start=1):
        # Semantic hits are note-level evidence: they lift the note's best lexical chunk,
        # or stand on the chunk of the note's best passage when lexical missed it.
        key = best_chunk.get(path, (path, ordinal))
        if key not in hits:
            if cosine < floor:
                continue
            hits[key] = FusedHit(path, key[1])
            order.setdefault(key, len(order))
        h = hits[key]
        if h.semantic_rank is None:
            h.semantic_rank, h.cosine = rank, cosine
            if vectors is not None:
                vec_of[key] = vectors[rank - 1]
        if cosine >= floor:
            h.semantic_part += sem_w / (rrf_k + rank)
    for h in hits.values():
        h.score = round(h.lexical_part + h.semantic_part + h.bonus, 6)
    ranked = sorted(hits, key=lambda key: (-round(hits[key].score, 9), order[key], key))
    if locked and lexical:
        top = (lexical[lead][0], lexical[lead][1])
        hits[top].lock = locked
        ranked.remove(top)
        ranked.insert(0, top)
    if vec_of and duplicate_cosine is not None:
        ranked = _demote_duplicates(ranked, hits, vec_of, duplicate_cosine, k)
    return [hits[key] for key in ranked[:k]]


def _demote_duplicates(
    ranked: list[tuple[str, int]],
    hits: dict[tuple[str, int], FusedHit],
    vec_of: dict[tuple[str, int], np.ndarray],
    threshold: float,
    k: int,
) -> list[tuple[str, int]]:
    """`ranked` with near-duplicates of a better-ranked hit moved after the others (their
    relative order kept). A copy keeps its place when it has better lexical evidence than
    every copy above it: the query's words chose it."""
    kept: list[tuple[str, int]] = []
    moved: list[tuple[str, int]] = []
    shown: list[tuple[tuple[str, int], np.ndarray]] = []
    for key in ranked:
        if len(kept) >= k:
            kept.append(key)
            continue
        vec = vec_of.get(key)
        h = hits[key]
        if vec is not None:
            twin = next((other for other, v in shown if float(v @ vec) >= threshold), None)
            if twin is not None and h.lock is None and _lexically_weaker(h, hits[twin]):
                h.duplicate_of = twin[0]
                moved.append(key)
                continue
            shown.append((key, vec))
        kept.append(key)
    return kept[:k] + moved + kept[k:]


def _lexically_weaker(h: FusedHit, twin: FusedHit) -> bool:
    if h.lexical_rank is None:
        return True
    return twin.lexical_rank is not None and twin.lexical_rank < h.lexical_rank


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
    """The top `k` (path, chunk ordinal, fused score) of both lists, best first: plain RRF
    with the lexical first hit's bonus (no lock, no duplicate check)."""
    return [
        h.hit
        for h in fuse_explained(
            lexical,
            semantic,
            k,
            rrf_k=rrf_k,
            lexical_weight=lexical_weight,
            semantic_weight=semantic_weight,
            semantic_margin=semantic_margin,
            lexical_top_bonus=lexical_top_bonus,
            duplicate_cosine=None,
        )
    ]
