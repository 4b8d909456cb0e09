"""The evidence behind fusion's pins, as pure functions: quoted phrases, CJK words counted
by their characters, a note named by its top heading, a keyword typed exactly. The pins
themselves over a real engine: test_pins.py; fusion's properties: test_fusion_properties.py."""

from __future__ import annotations

from vault_agent.semantic.evidence import exact_lead, names_note, quoted_phrases, word_count
from vault_agent.text import tokenize


def test_quoted_phrases_are_folded() -> None:
    assert quoted_phrases('find "Daily  Notes" and 「日本語 の句」') == ["daily notes", "日本語 の句"]
    assert quoted_phrases("no quotes") == []


def test_words_count_cjk_runs_by_characters_not_bigrams() -> None:
    assert word_count("基本文法") == 2  # three engine bigrams, one short keyword
    assert word_count("how do I sync") == 4
    assert word_count("Obsidian如何 sync") == 3
    assert word_count("为什么科技进步了人们的工作时间反而没有减少") == 7


def test_a_top_heading_names_a_note_whose_file_name_says_nothing() -> None:
    terms = list(dict.fromkeys(tokenize("基本文法")))
    assert names_note(terms, "README", "basic/README.md", "第一部: 基本文法 {#basic-grammar}")
    assert not names_note(terms, "README", "basic/README.md")


def test_a_keyword_typed_exactly_leads_where_the_stemmer_matched_more() -> None:
    texts = ["Tags\nhow to tag notes", "Styling\na task tagged urgent", "Tag view\ntags"]
    assert exact_lead("tagged", texts) == 1  # "tag" and "tags" matched too; one note says it
    assert exact_lead("tags", texts) is None  # the stemmer leaves it: the engine's order stands
    assert exact_lead("why are notes tagged twice", texts) is None  # a question
    assert exact_lead("テキストボックス", ["ボックス", "入力テキストボックスに"]) == 1
