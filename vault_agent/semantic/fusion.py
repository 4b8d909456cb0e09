"""Hybrid ranking: plain reciprocal rank fusion of the lexical and the semantic list.

    score(d) = 1 / (RRF_K + lexical rank of d) + 1 / (RRF_K + semantic rank of d)

(a list that does not hold d adds nothing; ranks 1-based; RRF_K = 10), and pins: a note
the query's own words point at keeps a place whatever the model says (`Pin`, decided by
query.search_modes from the lexical evidence): the note the query names first; the one
note holding a rare word, a CJK word or a quoted phrase of the query in the top HELD_RANK;
else, for a keyword query, the hit holding a word typed exactly first.

Plain RRF is the baseline; each pin stays because it raised a class of the held-out set,
lowered none there and none of the public benchmark (the held note is the one rule kept
by test: plain RRF cannot promise an exact rare word's note a place near the top, and its
measured cost is listed). Every other rule of earlier rounds (weights by query shape, a
cosine margin, near-duplicate demotion, locks by alias, quote or rare word) was measured
against plain RRF and removed: docs/benchmarks.md "Fusion rules (issue 29)".
Why ranks and not a score blend: BM25 scores are unbounded and query-dependent while
cosines sit in a narrow band, so a linear blend needs per-vault calibration; ranks need
none. Ties go to the order first seen (the lexical list, then the semantic one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# 10, not the customary 60: chosen on the dev sets (bench_retrieval.py --lab --fusion; k in
# 10, 20, 30, 60, 120). A smaller k weighs a list's first places more against a note that
# both lists hold lower down: a paraphrase the model ranks first is no longer passed by the
# lexical list's notes that share the question's words and sit mid-list in the model's
# (dev paraphrase r@5 0.714 -> 0.762, dev-extra 0.653 -> 0.701); docs/retrieval.md.
RRF_K = 10
# A pinned note ranks no lower than its place: first for the note the query names (the
# lexical first hit) or holds a keyword of typed exactly, HELD_RANK for the note that alone
# holds a rare word or a quoted phrase of the query. At most the named note and one other:
# then a note both lists rank in their top 5 still ends in the top 10 (RRF puts at most 8
# notes above it, and the lexical first note is one of them when there are 8).
HELD_RANK = 3

Hit = tuple[str, int, float]  # (path, chunk ordinal, score)

__all__ = ["HELD_RANK", "RRF_K", "FusedHit", "Hit", "Pin", "rrf"]


@dataclass(frozen=True)
class Pin:
    """A note the query's words pin near the top, and why."""

    path: str
    ordinal: int  # the chunk to show when the lexical list does not hold the note
    reason: str  # "title" | "exact" (first) | "rare" | "quote" (top HELD_RANK)
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
