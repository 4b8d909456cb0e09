"""Plain reciprocal rank fusion and its one rule, as properties over any pair of ranked
lists: a note both rankers put in their top 5 ends in the fused top 10; the note the query
pins by its words (a rare word or a quoted phrase one note alone holds) ends in the top 3;
the same lists give the same bytes. Pure functions (no model, no engine)."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.semantic.fusion import HELD_RANK, RRF_K, FusedHit, Held, rrf

NOTES = [f"n{i:02d}.md" for i in range(40)]

# A lexical list of chunk hits (several chunks of one note may rank, as with group=chunk),
# a semantic list of notes (one hit per note, as semantic_search answers), best first.
lexical_lists = st.lists(st.tuples(st.sampled_from(NOTES), st.integers(0, 3)), max_size=50, unique=True)
semantic_lists = st.lists(st.sampled_from(NOTES), max_size=50, unique=True)
held_notes = st.none() | st.builds(
    Held, st.sampled_from(NOTES), st.integers(0, 3), st.sampled_from(["rare", "quote"])
)


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


@settings(max_examples=400, deadline=None)
@given(lexical=lexical_lists, semantic=semantic_lists, held=held_notes)
def test_a_note_both_rankers_put_in_their_top_5_is_in_the_fused_top_10(
    lexical: list[tuple[str, int]], semantic: list[str], held: Held | None
) -> None:
    lex, sem = _lists(lexical, semantic)
    fused = rrf(lex, sem, 10, held)
    lex_rank, sem_rank = _first_ranks(lex), _first_ranks(sem)
    for path in set(lex_rank) & set(sem_rank):
        if lex_rank[path] <= 5 and sem_rank[path] <= 5:
            assert path in _paths(fused), (path, lex_rank[path], sem_rank[path])


@settings(max_examples=400, deadline=None)
@given(lexical=lexical_lists, semantic=semantic_lists, held=held_notes, k=st.integers(HELD_RANK, 50))
def test_the_pinned_note_is_in_the_top_3_wherever_the_lists_put_it(
    lexical: list[tuple[str, int]], semantic: list[str], held: Held | None, k: int
) -> None:
    lex, sem = _lists(lexical, semantic)
    fused = rrf(lex, sem, k, held)
    if held is not None:
        top = fused[:HELD_RANK]
        assert held.path in [h.path for h in top]
        assert next(h for h in top if h.path == held.path).held == held.reason
    assert sum(h.held is not None for h in fused) <= 1


@settings(max_examples=300, deadline=None)
@given(lexical=lexical_lists, semantic=semantic_lists, held=held_notes, k=st.integers(1, 60))
def test_fusion_keeps_every_hit_once_in_score_order_and_is_byte_stable(
    lexical: list[tuple[str, int]], semantic: list[str], held: Held | None, k: int
) -> None:
    lex, sem = _lists(lexical, semantic)
    fused = rrf(lex, sem, k, held)
    keys = [(h.path, h.ordinal) for h in fused]
    assert len(keys) == len(set(keys)) <= k
    every = rrf(lex, sem, 200, held)
    assert set(_paths(every)) == {p for p, _, _ in lex} | set(semantic) | ({held.path} if held else set())
    assert [(h.path, h.ordinal) for h in every[: len(fused)]] == keys  # a cut, never a reorder
    unpinned = [h.score for h in every if h.held is None]
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
    fused = rrf(lex, sem, 10, Held("rare.md", 4, "rare"))
    assert [(h.path, h.ordinal, h.held) for h in fused[:3]] == [
        ("l0.md", 0, None),
        ("l1.md", 0, None),
        ("rare.md", 4, "rare"),
    ]
    assert fused[2].score == 0.0
    # already in the top 3: it keeps its place
    fused = rrf(lex, sem, 10, Held("l1.md", 0, "quote"))
    assert [h.path for h in fused[:2]] == ["l0.md", "l1.md"] and fused[1].held == "quote"
