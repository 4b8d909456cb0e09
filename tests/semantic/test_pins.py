"""The pins of hybrid search over a real full-text engine (search_modes): the note the query
names goes first; the one note holding a rare word, a CJK word or a quoted phrase of the
query stays in the top 3, whatever the model's list says; a keyword typed exactly leads.
A real vault indexed by the real indexer; the semantic list is any ranking (hypothesis)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.search import lexical_hits, query_terms
from vault_agent.query.search_engine import open_engine
from vault_agent.query.search_modes import HybridRequest, exact_pin, held_pin, hybrid_ranking, named_pin
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.semantic.fusion import HELD_RANK

FILLER = "The garden plan lists seeds, soil, water and light for the season. "
NOTES: dict[str, str] = {
    **{f"garden/bed {i:02d}.md": f"# Bed {i}\n\n{FILLER * 3}\n" for i in range(30)},
    "garden/Compost.md": "# Compost\n\nThe zorblat mix feeds the soil; keep the pile damp.\n",
    "garden/Watering.md": "# Watering\n\nWater the seeds at dawn. See the zorblat note.\n",
    "garden/Frost.md": "# Frost\n\nCover the beds when the quillfeather forecast says frost.\n",
    "garden/Styling.md": "# Styling\n\nA bed tagged urgent gets a red label.\n",
    "garden/Tags.md": "# Tags\n\nHow to tag beds; tags group the beds.\n",
    "garden/Phrases.md": "# Phrases\n\nThe seeds need light and water every day.\n",
    "日本語/メモ.md": "# メモ\n\nメタデータの使い方。庭の計画を書く。\n",
    "日本語/庭.md": "# 庭\n\n庭の計画と種の一覧。\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SnapshotReader, Any]]:
    root = tmp_path_factory.mktemp("pins") / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    s = Settings(vault=root, index_dir=root / ".vault-agent")
    build_index(s, full=True)
    reader = SnapshotReader(s, vault_for_settings(s), freshness=lambda _m: "fresh")
    with reader.acquire() as view:
        engine = open_engine(Path(s.index_dir), view.manifest.search_index)
    yield reader, engine
    reader.close()


def _lexical(
    reader: SnapshotReader, q: str
) -> tuple[list[tuple[str, int, float]], dict[tuple[str, int], bytes]]:
    details: dict[tuple[str, int], bytes] = {}
    with reader.acquire() as view:
        hits = lexical_hits(reader, view, query_terms(q), 50, "note", details)
    return hits, details


def test_the_one_note_holding_a_rare_word_is_pinned(vault: tuple[SnapshotReader, Any]) -> None:
    _, engine = vault
    pin = held_pin(engine, "when does the quillfeather forecast matter", query_terms("quillfeather"))
    assert pin is not None and (pin.path, pin.reason, pin.place) == ("garden/Frost.md", "rare", HELD_RANK)
    assert held_pin(engine, "zorblat", query_terms("zorblat")) is None  # two notes hold it
    # two rare words, two notes: the query pins neither
    assert held_pin(engine, "quillfeather urgent", query_terms("quillfeather urgent")) is None


def test_a_quoted_phrase_pins_the_one_note_holding_it(vault: tuple[SnapshotReader, Any]) -> None:
    _, engine = vault
    q = 'seeds "need light and water" daily'
    pin = held_pin(engine, q, query_terms(q))
    assert pin is not None and (pin.path, pin.reason) == ("garden/Phrases.md", "quote")
    q = '"the seeds"'  # many notes hold it
    assert held_pin(engine, q, query_terms(q)) is None


def test_a_cjk_word_is_its_run_not_its_bigrams(vault: tuple[SnapshotReader, Any]) -> None:
    _, engine = vault
    pin = held_pin(engine, "メタデータ", query_terms("メタデータ"))
    assert pin is not None and pin.path == "日本語/メモ.md"
    # a sentence holding a bigram one note has ("使い") does not pin that note
    q = "庭の計画の使い道"
    assert held_pin(engine, q, query_terms(q)) is None


def test_a_named_note_goes_first_and_a_keyword_typed_exactly_leads(vault: tuple[SnapshotReader, Any]) -> None:
    reader, _ = vault
    lex, details = _lexical(reader, "Compost")
    pin = named_pin(query_terms("Compost"), lex, details)
    assert pin is not None and (pin.path, pin.reason, pin.place) == ("garden/Compost.md", "title", 1)
    lex, details = _lexical(reader, "how does the compost pile stay damp")
    assert named_pin(query_terms("how does the compost pile stay damp"), lex, details) is None
    lex, details = _lexical(reader, "tagged")
    pin = exact_pin("tagged", lex, details, 1)
    assert pin is not None and (pin.path, pin.reason) == ("garden/Styling.md", "exact")


semantic_orders = st.permutations(sorted(NOTES))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=semantic_orders, words=st.lists(st.sampled_from(FILLER.lower().split()), max_size=6))
def test_a_rare_word_keeps_its_note_in_the_top_3_whatever_the_model_says(
    vault: tuple[SnapshotReader, Any], order: list[str], words: list[str]
) -> None:
    reader, engine = vault
    q = " ".join([*words, "quillfeather"])
    lex, details = _lexical(reader, q)
    semantic = [(p, 0, round(0.9 - i / 1000, 6)) for i, p in enumerate(order) if p != "garden/Frost.md"]
    request = HybridRequest(q, query_terms(q), lex, details, semantic, 10)
    fused = hybrid_ranking(engine, request)
    assert "garden/Frost.md" in [h.path for h in fused[:HELD_RANK]]
    again = hybrid_ranking(engine, request)
    assert [(h.path, h.ordinal, h.score, h.pinned) for h in again] == [
        (h.path, h.ordinal, h.score, h.pinned) for h in fused
    ]
