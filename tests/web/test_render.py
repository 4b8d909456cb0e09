"""The one helper that emits markup: query terms wrapped in <mark>, everything else escaped."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from vault_agent.web.render import flat_items, highlight


@given(st.text(max_size=300), st.lists(st.text(min_size=1, max_size=8), max_size=4))
def test_highlight_escapes_everything_and_only_adds_marks(text: str, terms: list[str]) -> None:
    out = str(highlight(text, terms))
    bare = out.replace("<mark>", "").replace("</mark>", "")
    assert html.unescape(bare) == text
    assert "<" not in bare and ">" not in bare and '"' not in bare


def test_highlight_marks_words_and_cjk_bigrams() -> None:
    assert str(highlight("A <b>Lighthouse</b> lamp", ["lighthouse"])) == (
        "A &lt;b&gt;<mark>Lighthouse</mark>&lt;/b&gt; lamp")
    assert str(highlight("東京都庁へ", ["京都"])) == "東<mark>京都</mark>庁へ"
    assert str(highlight("plain", [])) == "plain"


def test_unknown_fields_are_shown_flat() -> None:
    explain = {"lexical": {"rank": 1, "score": 3.14159265}, "matched_fields": ["title", "body"], "x": None}
    assert flat_items(explain) == [("lexical.rank", "1"), ("lexical.score", "3.14159"),
                                   ("matched_fields", "title, body"), ("x", "–")]


def test_embedding_progress_fields_are_picked_whatever_their_names() -> None:
    from vault_agent.web.views_health import embedding_items

    details = {"semanticSearch": "pending", "embeddedShare": 0.5, "notesEmbedded": 5, "embedTotal": 10,
               "etaSeconds": 30, "embeddingEta": "1 min", "metadataFields": 3, "skipped": {}}
    assert [k for k, _ in embedding_items(details)] == ["semanticSearch", "embeddedShare", "notesEmbedded",
                                                         "embedTotal", "etaSeconds", "embeddingEta"]
