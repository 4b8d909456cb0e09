"""Hybrid search end to end: plain RRF with its pins. A query that names a note keeps it
first (and a question that merely shares a word with a name does not name it);
paraphrases find their notes; vault_find reads first what search ranks first. The real
model over an embedded snapshot of the synthetic multilingual vault."""

from __future__ import annotations

from typing import Any

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer
from vault_agent.paths import vault_for_settings
from vault_agent.query.find import FindRequest, vault_find
from vault_agent.semantic.evidence import name_overlap, names_note
from vault_agent.text import tokenize

from .conftest import FIXTURE, reader_for
from .test_hybrid_search import QUERIES

MEASURED_TOP3 = 15


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


def _search(settings_: Settings, **raw: Any) -> dict[str, Any]:
    reader = reader_for(settings_)
    try:
        ctx = AppContext(settings=settings_, vault=vault_for_settings(settings_), reader=reader)
        return body_of(CATALOG.named("search"), invoke(CATALOG.named("search"), ctx, raw))
    finally:
        reader.close()


def test_titles_stay_first_and_paraphrases_find_their_notes(embedded_vault: tuple[Settings, Writer]) -> None:
    settings_, _ = embedded_vault
    for note in sorted(FIXTURE.rglob("*.md")):
        body = _search(settings_, q=note.stem, limit=1, group="note")
        assert body["data"]["results"][0]["path"] == note.relative_to(FIXTURE).as_posix(), note.stem
        assert body["data"]["results"][0].get("explain") is None
    top3 = [
        any(
            r["path"] in q["targets"]
            for r in _search(settings_, q=q["q"], limit=3, group="note")["data"]["results"]
        )
        for q in QUERIES
    ]
    # The fixture's 20 paraphrase questions (zh, ja, cross-language, en), plain RRF with its
    # pins, multilingual-e5-small: measured 15 of 20 with a target in the top 3. One is
    # refused: "how do I fall asleep more easily" shares no word with the vault, which holds
    # Latin words, and its Japanese note's cosine (0.836) is below e5's floor (0.86).
    assert sum(top3) >= MEASURED_TOP3, top3


def _find_first_read(settings_: Settings, query: str) -> str | None:
    reader = reader_for(settings_)
    try:
        data = vault_find(vault_for_settings(settings_), reader, FindRequest(query)).data.model_dump()
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
        results = _search(settings_, q=q["q"], limit=1)["data"]["results"]
        top = results[0]["path"] if results else None
        first = _find_first_read(settings_, q["q"])
        agree += first == top
        right += first in q["targets"]
    # Measured: find's first read is search's first hit for 20 of 20 questions (the refused
    # one included: no hit, no read), and right for 13 with multilingual-e5-small, two
    # windows of 128 tokens a note and plain RRF (14 with one passage of 256 tokens; 15
    # with USE and issue 22's fusion; before round 3 find kept only chunks covering >= 60 %
    # / 30 % of the query's words).
    assert agree >= 18 and right >= 13, (agree, right)
