"""Fusion that never loses an exact match: the lexical evidence (a name, an alias, an exact
rare term, a quoted phrase) locks the lexical first hit; near-copies of a better-ranked
note move down; every hit says how it was ranked. Pure functions (no model)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.semantic.evidence import RARE_MAX_NOTES, lock_reason, quoted_phrases
from vault_agent.semantic.fusion import LEXICAL_TOP_BONUS, fuse_explained
from vault_agent.text import tokenize

LEX = [("a.md", 0, 9.0), ("b.md", 0, 5.0), ("c.md", 0, 4.0)]
SEM = [("d.md", 0, 0.61), ("e.md", 0, 0.60), ("b.md", 0, 0.59), ("f.md", 0, 0.58)]


def _paths(hits: list) -> list[str]:
    return [h.path for h in hits]


def _lock(
    query: str, text: str, df: dict[str, int], title: str = "Notes", path: str = "x/Notes.md"
) -> str | None:
    terms = list(dict.fromkeys(tokenize(query)))
    return lock_reason(query, terms, terms, title, path, text, lambda t: df.get(t, 1000))


def test_a_described_query_lets_the_model_lead_unless_the_lexical_first_hit_is_locked() -> None:
    free = fuse_explained(LEX, SEM, 10, described=True)
    assert _paths(free)[0] == "b.md"  # both lists hold b; the model's weight outranks a
    locked = fuse_explained(LEX, SEM, 10, described=True, locked="rare")
    assert _paths(locked)[0] == "a.md" and locked[0].lock == "rare"
    assert sorted(_paths(locked)) == sorted(_paths(free))  # the same hits, a is only moved


def test_a_lock_reason_names_the_evidence() -> None:
    text = "Set the EXTCODEHASH of an account, see the zorblat factor."
    assert _lock("zorblat", text, {"zorblat": 1}) == "rare"
    assert _lock("zorblat", text, {"zorblat": RARE_MAX_NOTES + 1}) is None  # held by many chunks
    assert _lock("zorblat", "no such word here", {"zorblat": 1}) is None  # another note holds it
    assert _lock("why is the zorblat factor set", text, {"zorblat": 1}) is None  # a question, not a keyword
    assert _lock('the "see the zorblat" rule', text, {}) == "quote"
    assert _lock("“SEE THE  zorblat”", text, {}) == "quote"
    assert _lock('"not in this note"', text, {}) is None
    assert _lock("notes", "", {}, title="Notes") == "title"
    terms = ["nick"]
    assert lock_reason("nick", terms, terms, "Other", "o.md", "", lambda t: 99, lambda ts: True) == "alias"


def test_quoted_phrases_are_folded() -> None:
    assert quoted_phrases('find "Daily  Notes" and 「日本語 の句」') == ["daily notes", "日本語 の句"]
    assert quoted_phrases("no quotes") == []


def test_a_near_copy_without_better_words_moves_below_the_others() -> None:
    lexical = [("en/Tabs.md", 0, 9.0), ("en/Panes.md", 0, 3.0)]
    semantic = [("de/Tabs.md", 0, 0.7), ("en/Tabs.md", 0, 0.69)]
    base = np.eye(4, dtype=np.float32)
    copy = (base[0] + 0.1 * base[3]) / np.linalg.norm(base[0] + 0.1 * base[3])
    vectors = np.stack([copy, base[0]])
    fused = fuse_explained(lexical, semantic, 10, described=True, vectors=vectors)
    assert _paths(fused) == ["en/Tabs.md", "en/Panes.md", "de/Tabs.md"]
    assert fused[-1].duplicate_of == "en/Tabs.md"
    # the copy the query's words chose keeps its place
    fused = fuse_explained([("de/Tabs.md", 0, 9.0)], semantic, 10, described=True, vectors=vectors)
    assert _paths(fused)[0] == "de/Tabs.md" and fused[0].duplicate_of is None
    # without vectors (or with the check off) nothing moves
    assert _paths(fuse_explained(lexical, semantic, 10, described=True)) == [
        "en/Tabs.md",
        "de/Tabs.md",
        "en/Panes.md",
    ]


def test_each_hit_carries_its_ranks_and_shares() -> None:
    fused = fuse_explained(LEX, SEM, 10, described=False)
    for h in fused:
        assert h.score == round(h.lexical_part + h.semantic_part + h.bonus, 6)
    a = next(h for h in fused if h.path == "a.md")
    assert (a.lexical_rank, a.lexical_score, a.semantic_rank, a.bonus) == (1, 9.0, None, LEXICAL_TOP_BONUS)
    b = next(h for h in fused if h.path == "b.md")
    assert (b.lexical_rank, b.semantic_rank, b.cosine) == (2, 3, 0.59)


hits = st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 2)), max_size=8, unique=True)


@settings(max_examples=200, deadline=None)
@given(
    lexical=hits,
    semantic=st.lists(st.sampled_from("abcdefgh"), max_size=8, unique=True),
    k=st.integers(1, 12),
    described=st.booleans(),
    with_vectors=st.booleans(),
)
def test_a_locked_lexical_first_hit_is_always_first(
    lexical: list[tuple[str, int]], semantic: list[str], k: int, described: bool, with_vectors: bool
) -> None:
    lex = [(p + ".md", o, float(10 - i)) for i, (p, o) in enumerate(lexical)]
    sem = [(p + ".md", 0, round(0.9 - 0.01 * i, 6)) for i, p in enumerate(semantic)]
    rng = np.random.default_rng(len(lexical) * 31 + len(semantic))
    vecs = rng.normal(size=(len(sem), 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-9
    fused = fuse_explained(
        lex, sem, k, described=described, locked="rare", vectors=vecs if with_vectors else None
    )
    if lex:
        assert (fused[0].path, fused[0].ordinal) == (lex[0][0], lex[0][1])
    keys = [(h.path, h.ordinal) for h in fused]
    assert len(keys) == len(set(keys)) <= k
    again = fuse_explained(
        lex, sem, k, described=described, locked="rare", vectors=vecs if with_vectors else None
    )
    assert [h.hit for h in again] == [h.hit for h in fused]  # deterministic


def test_words_count_cjk_runs_by_characters_not_bigrams() -> None:
    from vault_agent.semantic.evidence import word_count

    assert word_count("基本文法") == 2  # three engine bigrams, one short keyword
    assert word_count("how do I sync") == 4
    assert word_count("Obsidian如何 sync") == 3
    assert word_count("为什么科技进步了人们的工作时间反而没有减少") == 7


def test_a_top_heading_names_a_note_whose_file_name_says_nothing() -> None:
    from vault_agent.semantic.evidence import names_note

    terms = list(dict.fromkeys(tokenize("基本文法")))
    assert names_note(terms, "README", "basic/README.md", "第一部: 基本文法 {#basic-grammar}")
    assert not names_note(terms, "README", "basic/README.md")


def test_a_keyword_typed_exactly_leads_where_the_stemmer_matched_more() -> None:
    from vault_agent.semantic.evidence import exact_lead

    texts = ["Tags\nhow to tag notes", "Styling\na task tagged urgent", "Tag view\ntags"]
    assert exact_lead("tagged", texts) == 1  # "tag" and "tags" matched too; one note says it
    assert exact_lead("tags", texts) is None  # the stemmer leaves it: the engine's order stands
    assert exact_lead("why are notes tagged twice", texts) is None  # a question
    assert exact_lead("テキストボックス", ["ボックス", "入力テキストボックスに"]) == 1
    lexical = [("tags.md", 0, 9.0), ("styling.md", 0, 3.0)]
    fused = fuse_explained(lexical, [("other.md", 0, 0.9)], 5, locked="exact", lead=1)
    assert (fused[0].path, fused[0].lexical_rank, fused[0].lock) == ("styling.md", 2, "exact")
