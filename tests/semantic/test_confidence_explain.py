"""A query no note holds a word of gets no confident-looking results (NO_CONFIDENT_MATCH)
unless the model finds a note near enough; `explain` says how each hit was ranked. The
real model over an embedded snapshot of the synthetic multilingual vault."""

from __future__ import annotations

from typing import Any

from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer

from .test_hybrid_search import _search

MADE_UP = ["florbix quandle vemtor", "zorplat mibbeck", "犇猋骉麤"]


def _codes(body: dict[str, Any]) -> list[str]:
    return [w["code"] for w in body["warnings"]]


def test_made_up_words_get_no_results_and_say_why(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    for q in MADE_UP:
        for mode in (None, "semantic"):
            body = _search(settings, q=q, **({"mode": mode} if mode else {}))
            assert body["data"]["results"] == [], (q, mode)
            assert _codes(body) == ["NO_CONFIDENT_MATCH"], (q, mode)
            assert "similarity" in body["warnings"][0]["message"]
        lexical = _search(settings, q=q, mode="lexical")
        assert (lexical["data"]["results"], lexical["warnings"]) == ([], [])  # lexical: simply nothing


def test_a_question_in_another_language_is_still_answered(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    # no note holds a word of it (the note is Japanese): the model's neighbours that stand
    # out answer (a question with common words has lexical hits and never reaches the gate)
    body = _search(settings, q="packing luggage, flying abroad", limit=3, group="note")
    assert "NO_CONFIDENT_MATCH" not in _codes(body)
    assert "日本語/海外旅行の持ち物.md" in [r["path"] for r in body["data"]["results"]]


def test_explain_says_how_each_hit_was_ranked(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    plain = _search(settings, q="sourdough starter feeding", limit=5)
    assert all("explain" not in r for r in plain["data"]["results"])  # off by default
    body = _search(settings, q="sourdough starter feeding", limit=5, explain=True)
    results = body["data"]["results"]
    assert [r["path"] for r in results] == [r["path"] for r in plain["data"]["results"]]
    for r in results:
        e = r["explain"]
        assert set(e) == {"lexicalRank", "lexicalScore", "semanticRank", "cosine", "fusion", "matchedFields"}
        assert set(e["fusion"]) == {"lexical", "semantic", "pinned"}
        assert abs(r["score"] - (e["fusion"]["lexical"] + e["fusion"]["semantic"])) < 3e-6
        assert e["lexicalRank"] is not None or e["semanticRank"] is not None
    top = results[0]["explain"]
    assert top["lexicalRank"] == 1 and "title" in top["matchedFields"] and top["fusion"]["pinned"] == "rare"
    lexical = _search(settings, q="sourdough", mode="lexical", explain=True)["data"]["results"][0]["explain"]
    assert (lexical["lexicalRank"], lexical["semanticRank"], lexical["fusion"]["semantic"]) == (1, None, 0.0)
