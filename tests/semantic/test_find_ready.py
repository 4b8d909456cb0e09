"""vault_find says `ready` on hybrid evidence: a lead both rankers agree on (or that the
query names) is sufficient, whatever share of the query's words it holds.
Real model, real embedded fixture (conftest.embedded_vault)."""

from __future__ import annotations

from typing import Any

from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer
from vault_agent.query.find import AGREED_SUFFICIENCY, READY_SUFFICIENCY, Cand, lead_sufficiency
from vault_agent.query.search_modes import lead_agreed

from .conftest import FIXTURE, reader_for
from .test_hybrid_search import QUERIES


def _cand(lead: str = "", exact: bool = False) -> Cand:
    return Cand("a.md", 0, 1, 2, exact, 0.5, frozenset(), 0, lead)


def test_an_agreed_lead_is_sufficient_by_itself() -> None:
    assert AGREED_SUFFICIENCY >= READY_SUFFICIENCY
    assert lead_sufficiency(0.4, [_cand(), _cand("agreed")]) == AGREED_SUFFICIENCY
    assert lead_sufficiency(0.95, [_cand("agreed")]) == 0.95
    assert lead_sufficiency(0.5, [_cand("disputed")]) == 0.5  # the words' formula
    assert lead_sufficiency(0.85, [_cand(exact=True)]) == 0.85  # lexical answer: the words' formula


def test_lead_agreed_needs_both_rankers_or_a_name() -> None:
    lex = [("a.md", 0, 3.0), ("b.md", 0, 2.0)]
    assert lead_agreed([("a.md", 0, 0.1)], lex, [("a.md", 0, 0.8)], ["x"], {})
    assert not lead_agreed([("a.md", 0, 0.1)], lex, [("b.md", 0, 0.8)], ["x"], {})
    assert not lead_agreed([("b.md", 0, 0.1)], lex, [("b.md", 0, 0.8)], ["x"], {})  # lexical disagrees
    assert lead_agreed([("a.md", 0, 0.1)], lex, [("b.md", 0, 0.8)], ["a"], {})  # the query names a.md
    assert not lead_agreed([], lex, [], ["a"], {})


def _find(settings_: Settings, query: str) -> tuple[str, list[str]]:
    from vault_agent.paths import vault_for_settings
    from vault_agent.query.find import FindRequest, vault_find

    reader = reader_for(settings_)
    try:
        data: dict[str, Any] = vault_find(
            vault_for_settings(settings_), reader, FindRequest(query)
        ).data.model_dump()
    finally:
        reader.close()
    reads = [a["params"]["path"] for a in data["next_actions"] if a["type"] == "vault_read"]
    return data["summary"]["integration_status"], reads


def test_ready_on_names_and_agreed_paraphrases(embedded_vault: tuple[Settings, Writer]) -> None:
    settings_, _ = embedded_vault
    for note in sorted(FIXTURE.rglob("*.md")):  # a note's own name: ready, and read first
        status, reads = _find(settings_, note.stem)
        assert (status, reads[:1]) == ("ready", [note.relative_to(FIXTURE).as_posix()]), note.stem
    outcomes = [(*_find(settings_, q["q"]), q["targets"]) for q in QUERIES]
    ready = [any(r in targets for r in reads) for status, reads, targets in outcomes if status == "ready"]
    # The fixture's 20 paraphrase questions: with USE 8 were ready, each reading a right
    # note (before: none ready, the words of a paraphrase never cover 80 % of the query);
    # with e5 10 are ready and 9 read a right note: for "how long should I focus before
    # taking a short break" both rankers put Sourdough Bread first (its dough rests), not
    # the Chinese pomodoro note.
    assert len(ready) >= 6 and sum(ready) >= len(ready) - 1, ready
