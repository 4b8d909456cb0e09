"""Plain reciprocal rank fusion and its pins, as properties over any pair of ranked lists:
a note both rankers put in their top 5 ends in the fused top 10; a pinned note ends at or
above its place (the note the query names first; the note it pins by a rare word, a
quoted phrase or a word typed exactly, in the top 3); the same lists give the same bytes.
Pure functions (no model, no engine): search_modes decides the pins, these tests hold for
any pins of the shapes it makes (the lexical first hit first, and one other)."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.semantic.fusion import HELD_RANK, RRF_K, FusedHit, Pin, rrf

NOTES = [f"n{i:02d}.md" for i in range(40)]

# A lexical list of chunk hits (several chunks of one note may rank, as with group=chunk),
# a semantic list of notes (one hit per note, as semantic_search answers), best first.
lexical_lists = st.lists(st.tuples(st.sampled_from(NOTES), st.integers(0, 3)), max_size=50, unique=True)
semantic_lists = st.lists(st.sampled_from(NOTES), max_size=50, unique=True)
# search_modes' pins: the lexical first hit first when the query names it; and one other
# note, in the top 3 (a rare word, a quoted phrase) or first (a word typed exactly).
other_pins = st.none() | st.builds(
    Pin,
    st.sampled_from(NOTES),
    st.integers(0, 3),
    st.sampled_from(["rare", "quote", "exact"]),
    st.sampled_from([1, HELD_RANK]),
)


def _pins(lex: list, named: bool, other: Pin | None) -> list[Pin]:
    pins = [Pin(lex[0][0], lex[0][1], "title", 1)] if named and lex else []
    return pins + ([other] if other is not None else [])


def _lists(lexical: list[tuple[str, int]], semantic: list[str]) -> tuple[list, list]:
    lex = [(p, o, round(20.0 - 0.3 * i, 6)) for i, (p, o) in enumerate(lexical)]
    sem = [(p, 0, round(0.95 - 0.004 * i, 6)) for i, p in enumerate(semantic)]
    return lex, sem


def _first_ranks(hits: list) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for i, h in enumerate(hits, start=1):
        ranks.setdefault(h[0], i)
    return ranks


def _paths(fused: list[FusedHit]) -> list[str]:
    return list(dict.fromkeys(h.path for h in fused))


@settings(max_examples=600, deadline=None)
@given(lexical=lexical_lists, semantic=semantic_lists, named=st.booleans(), other=other_pins)
def test_a_note_both_rankers_put_in_their_top_5_is_in_the_fused_top_10(
    lexical: list[tuple[str, int]], semantic: list[str], named: bool, other: Pin | None
) -> None:
    lex, sem = _lists(lexical, semantic)
    fused = rrf(lex, sem, 10, _pins(lex, named, other))
    lex_rank, sem_rank = _first_ranks(lex), _first_ranks(sem)
    for path in set(lex_rank) & set(sem_rank):
        if lex_rank[path] <= 5 and sem_rank[path] <= 5:
            assert path in _paths(fused), (path, lex_rank[path], sem_rank[path])


@settings(max_examples=400, deadline=None)
@given(
    lexical=lexical_lists,
    semantic=semantic_lists,
    named=st.booleans(),
    other=other_pins,
    k=st.integers(HELD_RANK, 50),
)
def test_a_pinned_note_is_at_or_above_its_place_wherever_the_lists_put_it(
    lexical: list[tuple[str, int]], semantic: list[str], named: bool, other: Pin | None, k: int
) -> None:
    lex, sem = _lists(lexical, semantic)
    pins = _pins(lex, named, other)
    fused = rrf(lex, sem, k, pins)
    paths = [h.path for h in fused]
    for pin in pins:
        if pin.place == 1 and any(p.place == 1 and p is not pin for p in pins):
            assert pin.path in paths[:2]  # two notes pinned first: both in the first two places
        else:
            assert pin.path in paths[: pin.place], (pin, paths[:3])
    assert {h.pinned for h in fused if h.pinned} <= {p.reason for p in pins}


@settings(max_examples=300, deadline=None)
@given(lexical=lexical_lists, semantic=semantic_lists, other=other_pins, k=st.integers(1, 60))
def test_fusion_keeps_every_hit_once_in_score_order_and_is_byte_stable(
    lexical: list[tuple[str, int]], semantic: list[str], other: Pin | None, k: int
) -> None:
    lex, sem = _lists(lexical, semantic)
    held = [other] if other is not None else []
    fused = rrf(lex, sem, k, held)
    keys = [(h.path, h.ordinal) for h in fused]
    assert len(keys) == len(set(keys)) <= k
    every = rrf(lex, sem, 200, held)
    assert set(_paths(every)) == {p for p, _, _ in lex} | set(semantic) | {p.path for p in held}
    assert [(h.path, h.ordinal) for h in every[: len(fused)]] == keys  # a cut, never a reorder
    unpinned = [h.score for h in every if h.pinned is None]
    assert unpinned == sorted(unpinned, reverse=True)
    for h in every:
        assert h.score == round(h.lexical_part + h.semantic_part, 6)
        if h.lexical_rank is not None:
            assert h.lexical_part == 1.0 / (RRF_K + h.lexical_rank)
        if h.semantic_rank is not None:
            assert h.semantic_part == 1.0 / (RRF_K + h.semantic_rank)
    dump = json.dumps([dataclasses.asdict(h) for h in fused])
    again = rrf(list(lex), list(sem), k, held)
    assert json.dumps([dataclasses.asdict(h) for h in again]) == dump


def test_a_semantic_hit_lifts_its_notes_best_lexical_chunk() -> None:
    lex = [("a.md", 2, 9.0), ("b.md", 0, 5.0), ("a.md", 0, 4.0)]
    sem = [("a.md", 1, 0.9), ("c.md", 3, 0.8)]
    fused = rrf(lex, sem, 10)
    assert [(h.path, h.ordinal) for h in fused] == [("a.md", 2), ("b.md", 0), ("c.md", 3), ("a.md", 0)]
    assert (fused[0].lexical_rank, fused[0].semantic_rank, fused[0].cosine) == (1, 1, 0.9)
    assert fused[2].lexical_rank is None and fused[2].semantic_rank == 2


def test_ties_go_to_the_lexical_order() -> None:
    # rank 1 in one list each: equal shares; the lexical hit comes first
    fused = rrf([("lex.md", 0, 3.0)], [("sem.md", 0, 0.9)], 10)
    assert [h.path for h in fused] == ["lex.md", "sem.md"] and fused[0].score == fused[1].score


def test_a_pinned_note_outside_both_lists_stands_on_its_own_chunk() -> None:
    lex = [(f"l{i}.md", 0, 10.0 - i) for i in range(5)]
    sem = [(f"l{i}.md", 0, 0.9 - i / 100) for i in range(5)]
    fused = rrf(lex, sem, 10, [Pin("rare.md", 4, "rare", HELD_RANK)])
    assert [(h.path, h.ordinal, h.pinned) for h in fused[:3]] == [
        ("l0.md", 0, None),
        ("l1.md", 0, None),
        ("rare.md", 4, "rare"),
    ]
    assert fused[2].score == 0.0
    # already in the top 3: it keeps its place
    fused = rrf(lex, sem, 10, [Pin("l1.md", 0, "quote", HELD_RANK)])
    assert [h.path for h in fused[:2]] == ["l0.md", "l1.md"] and fused[1].pinned == "quote"
    # the note the query names goes first; a note pinned in the top 3 stays there
    fused = rrf(lex, sem, 10, [Pin("l4.md", 0, "title", 1), Pin("rare.md", 4, "rare", HELD_RANK)])
    assert [h.path for h in fused[:3]] == ["l4.md", "l0.md", "rare.md"]
