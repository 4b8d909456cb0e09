"""Adaptive hybrid fusion: a query that names the lexical first note keeps it first; a
query that describes a note in other words lets the model's ranking lead.

Pure-function tests of the evidence rule and the fusion, then the real model end to end
(the `search` operation over an embedded snapshot of the synthetic multilingual vault)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer
from vault_agent.paths import vault_for_settings
from vault_agent.query.search import FUSION_POOL, query_terms, ranked_hits
from vault_agent.semantic.evidence import name_overlap, names_note
from vault_agent.semantic.fusion import fuse, fuse_explained
from vault_agent.text import tokenize

from .conftest import FIXTURE, reader_for
from .test_hybrid_search import QUERIES


def _names(query: str, title: str | None, path: str) -> bool:
    return names_note(list(dict.fromkeys(tokenize(query))), title, path)


def test_a_title_or_a_title_with_a_few_words_names_the_note() -> None:
    assert _names("Recurring Tasks", "Recurring Tasks", "Getting Started/Recurring Tasks.md")
    assert _names("recurring tasks setup", "Recurring Tasks", "Getting Started/Recurring Tasks.md")
    assert _names("安卓手机Git同步", None, "中文/安卓手机Git同步.md")
    # the file stem is a name of its own: "eip-1052" does not dilute the title's share
    assert _names("EXTCODEHASH opcode", "EXTCODEHASH opcode", "EIPS/eip-1052.md")
    assert _names("eip-1052", "EXTCODEHASH opcode", "EIPS/eip-1052.md")


def test_a_question_that_shares_a_word_with_the_name_does_not_name_it() -> None:
    question = "how do I open a dialog to fill in a to-do's dates and priority"
    assert not _names(question, "Dates", "Getting Started/Dates.md")
    assert not _names("make a to-do come back after I tick it off", "Recurring Tasks", "Recurring Tasks.md")
    assert name_overlap([], "Dates", "Dates.md") == (0.0, 0.0)


LEX = [("a.md", 0, 9.0), ("b.md", 0, 5.0), ("c.md", 0, 4.0)]
SEM = [("b.md", 0, 0.61), ("d.md", 0, 0.60), ("e.md", 0, 0.30)]


def _order(described: bool) -> list[str]:
    return [h.path for h in fuse_explained(LEX, SEM, 10, described=described)]


def test_a_keyword_query_keeps_the_lexical_first_hit_first() -> None:
    # the model weighs SEMANTIC_WEIGHT (0.25) and a gets the bonus: the engine's order, d
    # (only the model found it) after the engine's hits; e is beyond the cosine margin
    assert _order(False) == ["a.md", "b.md", "c.md", "d.md"]


def test_a_described_query_lets_the_agreement_of_both_lists_lead() -> None:
    # equal weights and no bonus: b, in both lists, outranks a, which merely shares words
    assert _order(True) == ["b.md", "a.md", "d.md", "c.md"]


hits = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 3), st.floats(0, 1)),
    max_size=12,
    unique_by=lambda h: h[:2],
)


@settings(max_examples=60, deadline=None)
@given(lexical=hits, semantic=hits, described=st.booleans(), k=st.integers(1, 20))
def test_adaptive_fusion_is_fusion_of_the_same_hits(
    lexical: list[tuple[str, int, float]], semantic: list[tuple[str, int, float]], described: bool, k: int
) -> None:
    lexical, semantic = (sorted(h, key=lambda x: -x[2]) for h in (lexical, semantic))  # ranked lists
    got = [h.hit for h in fuse_explained(lexical, semantic, k, described=described)]
    keys = [(p, o) for p, o, _ in got]
    assert len(keys) == len(set(keys)) <= k
    assert [h[2] for h in got] == sorted((h[2] for h in got), reverse=True)
    assert got == [h.hit for h in fuse_explained(lexical, semantic, k, described=described)]  # deterministic


def _search(settings_: Settings, **raw: Any) -> dict[str, Any]:
    reader = reader_for(settings_)
    try:
        ctx = AppContext(settings=settings_, vault=vault_for_settings(settings_), reader=reader)
        return body_of(CATALOG.named("search"), invoke(CATALOG.named("search"), ctx, raw))
    finally:
        reader.close()


def _plain_first(settings_: Settings, query: str) -> str:
    """The first hit of plain RRF (+ lexical-top bonus, equal weights, margin 0.15: round 2's
    ranking) over the same real lexical and semantic lists search fuses."""
    reader = reader_for(settings_)
    try:
        with reader.acquire() as view:
            terms = query_terms(query)
            lex, _, _ = ranked_hits(reader, view, query, terms, FUSION_POOL, "lexical", "note")
            sem, _, _ = ranked_hits(reader, view, query, terms, FUSION_POOL, "semantic", "note")
        return fuse(lex, sem, 1, semantic_weight=1.0, semantic_margin=0.15)[0][0]
    finally:
        reader.close()


def test_titles_stay_first_and_paraphrases_come_first_more_often(
    embedded_vault: tuple[Settings, Writer],
) -> None:
    settings_, _ = embedded_vault
    for note in sorted(FIXTURE.rglob("*.md")):
        body = _search(settings_, q=note.stem, limit=1, group="note")
        assert body["data"]["results"][0]["path"] == note.relative_to(FIXTURE).as_posix(), note.stem
    adaptive = [
        _search(settings_, q=q["q"], limit=1, group="note")["data"]["results"][0]["path"] in q["targets"]
        for q in QUERIES
    ]
    plain = [_plain_first(settings_, q["q"]) in q["targets"] for q in QUERIES]
    # The fixture's 20 paraphrase questions (zh, ja, cross-language, en): measured first hit
    # right for 15 with the shipped fusion, 13 with plain RRF + bonus (round 4's fusion: 17;
    # it weighed the model 1.5x for any question and lost rare terms and keywords to the
    # engine alone: docs/retrieval.md). The misses: English questions whose answer is a
    # Chinese or Japanese note, where an English note shares the question's common words.
    assert sum(adaptive) >= 15 and sum(adaptive) > sum(plain), (adaptive, plain)


def _find_first_read(settings_: Settings, query: str) -> str | None:
    from vault_agent.paths import vault_for_settings
    from vault_agent.query.find import vault_find

    reader = reader_for(settings_)
    try:
        data = vault_find(vault_for_settings(settings_), reader, query).data.model_dump()
    finally:
        reader.close()
    reads = [a["params"]["path"] for a in data["next_actions"] if a["type"] == "vault_read"]
    return reads[0] if reads else None


def test_vault_find_reads_first_what_hybrid_search_ranks_first(
    embedded_vault: tuple[Settings, Writer],
) -> None:
    settings_, _ = embedded_vault
    agree = 0
    right = 0
    for q in QUERIES:
        top = _search(settings_, q=q["q"], limit=1)["data"]["results"][0]["path"]
        first = _find_first_read(settings_, q["q"])
        agree += first == top
        right += first in q["targets"]
    # Measured: find's first read is search's first hit for 20 of 20 questions, and right for
    # 15, as search's (before round 3: find kept only chunks covering >= 60 % / 30 % of the
    # query's words).
    assert agree >= 18 and right >= 15, (agree, right)
