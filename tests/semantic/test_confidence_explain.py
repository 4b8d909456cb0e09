"""A query no note holds a word of gets no confident-looking results (NO_CONFIDENT_MATCH)
unless the model finds a note near enough, or the query is in a script the vault holds no
word of (a question in another language); `explain` says how each hit was ranked. The
real model over an embedded snapshot of the synthetic multilingual vault."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer
from vault_agent.semantic.encoder import Encoder

from .conftest import FIXTURE, fully_embedded, settings_for, wait_until
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


def test_a_question_in_a_script_the_vault_has_no_word_of_is_answered(
    tmp_path: Path, encoder: Encoder
) -> None:
    # Only the Japanese notes: an English question shares no word with any note, its words
    # being in a script the vault holds no word of (a question in another language), so
    # the model's neighbours answer whatever their cosine (semantic.confidence)
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE / "日本語", vault / "日本語")
    settings = settings_for(vault)
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
        body = _search(settings, q="what to pack before flying abroad", limit=3, group="note")
        assert "NO_CONFIDENT_MATCH" not in _codes(body)
        assert "日本語/海外旅行の持ち物.md" in [r["path"] for r in body["data"]["results"]]
        # in the vault's own script, a query no note holds a word of needs a close neighbour
        made_up = _search(settings, q="犇猋骉麤")
        assert (made_up["data"]["results"], _codes(made_up)) == ([], ["NO_CONFIDENT_MATCH"])


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


def test_a_query_the_model_cannot_read_is_not_answered_in_any_script(
    tmp_path: Path, encoder: Encoder
) -> None:
    # Only the English notes: a Chinese question is in a script the vault holds no word of
    # and is answered; a string of characters outside the model's vocabulary is in that
    # script too, but the model cannot read it, so the floor judges it (semantic.confidence)
    assert encoder.unknown_chars("犇猋骉麤") > 0 and encoder.unknown_chars("如何给自行车链条上油") == 0
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE / "english", vault / "english")
    settings = settings_for(vault)
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
        body = _search(settings, q="如何给自行车链条上油", limit=3, group="note")
        assert "NO_CONFIDENT_MATCH" not in _codes(body) and body["data"]["results"]
        made_up = _search(settings, q="犇猋骉麤")
        assert (made_up["data"]["results"], _codes(made_up)) == ([], ["NO_CONFIDENT_MATCH"])
