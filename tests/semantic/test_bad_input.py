"""Bad input to semantic and hybrid search with the real model: every query gets a clear
answer or a clear error (INVALID_PARAMETER), never INTERNAL; a vault with zero notes
answers empty."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.errors import VaultAgentError
from vault_agent.indexer.engine import Writer
from vault_agent.paths import vault_for_settings
from vault_agent.semantic.encoder import Encoder

from .conftest import copy_vault, fully_embedded, reader_for, settings_for, wait_until

MODES = [None, "semantic", "hybrid"]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[AppContext]:
    settings = settings_for(copy_vault(tmp_path_factory.mktemp("bad") / "vault"))
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
    reader = reader_for(settings)
    try:
        yield AppContext(settings=settings, vault=vault_for_settings(settings), reader=reader)
    finally:
        reader.close()


def _search(ctx: AppContext, **raw: Any) -> dict[str, Any]:
    return body_of(CATALOG.named("search"), invoke(CATALOG.named("search"), ctx, raw))


def _check_answer(body: dict[str, Any], mode: str | None, limit: int) -> None:
    data = body["data"]
    assert data["mode"] == (mode or "hybrid")
    assert len(data["results"]) <= limit
    paths = [r["path"] for r in data["results"]]
    assert len(paths) == len(set(paths))  # group=note: one hit per note
    assert {w["code"] for w in body["warnings"]} <= {"NO_SEARCH_TERMS", "NO_CONFIDENT_MATCH"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "query",
    [
        "taxes " * 166,  # 996 characters
        "the of and to a in is it",  # stopwords only
        "🙂🚀📅🎉",  # emoji only
        "!!! ??? ...",  # punctuation only
        "Obsidian 税金 backup バックアップ 세금 신고",  # mixed scripts
        "zzqx-no-such-word",  # matches nothing lexically
    ],
)
def test_odd_queries_get_an_answer(ctx: AppContext, mode: str | None, query: str) -> None:
    raw: dict[str, Any] = {"q": query, "limit": 5, "group": "note"}
    if mode:
        raw["mode"] = mode
    _check_answer(_search(ctx, **raw), mode, 5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", ["", "   ", "\n\t", "x" * 1_001])
def test_empty_and_over_long_queries_are_invalid_parameters(
    ctx: AppContext, mode: str | None, query: str
) -> None:
    raw: dict[str, Any] = {"q": query} | ({"mode": mode} if mode else {})
    with pytest.raises(VaultAgentError) as info:
        _search(ctx, **raw)
    assert info.value.code == "INVALID_PARAMETER"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=120), mode=st.sampled_from(["semantic", "hybrid"]))
def test_any_text_is_an_answer_or_invalid_parameter(ctx: AppContext, query: str, mode: str) -> None:
    try:
        body = _search(ctx, q=query, mode=mode, limit=3, group="note")
    except VaultAgentError as exc:
        assert exc.code == "INVALID_PARAMETER", exc.code
        assert not query.strip() or len(query) > 1_000 or "\x00" in query
        return
    _check_answer(body, mode, 3)


def test_zero_note_vault_answers_empty(tmp_path: Path, encoder: Encoder) -> None:
    vault = tmp_path / "empty"
    vault.mkdir()
    settings = Settings(vault=vault, index_dir=tmp_path / "state")
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
    reader = reader_for(settings)
    try:
        ctx = AppContext(settings=settings, vault=vault_for_settings(settings), reader=reader)
        body = _search(ctx, q="anything at all")
        assert (body["data"]["mode"], body["data"]["results"], body["warnings"]) == ("lexical", [], [])
        hybrid = _search(ctx, q="anything at all", mode="hybrid")
        assert (hybrid["data"]["mode"], hybrid["data"]["results"]) == ("lexical", [])
        assert [w["code"] for w in hybrid["warnings"]] == ["SEMANTIC_UNAVAILABLE"]  # says why: no embeddings
    finally:
        reader.close()
