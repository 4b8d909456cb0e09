"""The one helper that emits markup: query terms wrapped in <mark>, everything else escaped."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from vault_agent.query.match_terms import query_stems
from vault_agent.web.render import flat_items, highlight


@given(st.text(max_size=300), st.lists(st.text(min_size=1, max_size=8), max_size=4))
def test_highlight_escapes_everything_and_only_adds_marks(text: str, terms: list[str]) -> None:
    out = str(highlight(text, frozenset(terms)))
    bare = out.replace("<mark>", "").replace("</mark>", "")
    assert html.unescape(bare) == text
    assert "<" not in bare and ">" not in bare and '"' not in bare


def test_highlight_marks_words_and_cjk_bigrams() -> None:
    assert str(highlight("A <b>Lighthouse</b> lamp", query_stems("lighthouse"))) == (
        "A &lt;b&gt;<mark>Lighthouse</mark>&lt;/b&gt; lamp"
    )
    assert str(highlight("東京都庁へ", query_stems("京都"))) == "東<mark>京都</mark>庁へ"
    assert str(highlight("plain", frozenset())) == "plain"


def test_highlight_marks_what_the_engine_matched_never_stop_words() -> None:
    stems = query_stems("How do I change the font sizes of THE tables?")
    text = "How the font size changes: the table of sizes"
    assert str(highlight(text, stems)) == (
        "How the <mark>font</mark> <mark>size</mark> <mark>changes</mark>: the <mark>table</mark> of <mark>sizes</mark>"
    )
    assert query_stems("the how what why of and") == frozenset()
    assert query_stems("如何 安卓") == frozenset({"安卓"})  # a CJK question word is no topic


def test_unknown_fields_are_shown_flat() -> None:
    explain = {"lexical": {"rank": 1, "score": 3.14159265}, "matched_fields": ["title", "body"], "x": None}
    assert flat_items(explain) == [
        ("lexical.rank", "1"),
        ("lexical.score", "3.14159"),
        ("matched_fields", "title, body"),
        ("x", "–"),
    ]


def test_embedding_progress_fields_are_picked_whatever_their_names() -> None:
    from vault_agent.web.views_health import embedding_items

    details = {
        "semanticSearch": "pending",
        "embeddedShare": 0.5,
        "notesEmbedded": 5,
        "embedTotal": 10,
        "etaSeconds": 30,
        "embeddingEta": "1 min",
        "metadataFields": 3,
        "skipped": {},
    }
    assert [k for k, _ in embedding_items(details)] == [
        "semanticSearch",
        "embeddedShare",
        "notesEmbedded",
        "embedTotal",
        "etaSeconds",
        "embeddingEta",
    ]


def test_every_template_and_asset_ships_in_the_wheel() -> None:
    """pyproject's package-data globs cover every file of web/templates and web/static."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "vault_agent.web"
    ]
    web = root / "vault_agent" / "web"
    files = [p.relative_to(web).as_posix() for d in ("templates", "static") for p in (web / d).iterdir()]
    assert len(files) > 15
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []
