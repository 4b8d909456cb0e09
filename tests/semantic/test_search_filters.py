"""Search filters on the semantic ranker: the candidates are the filtered notes, ranked as
they rank among all notes (nothing lost to the top-k of the others)."""

from __future__ import annotations

from typing import Any

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer
from vault_agent.paths import vault_for_settings

from .conftest import reader_for


def _paths(settings: Settings, **raw: Any) -> list[str]:
    reader = reader_for(settings)
    try:
        ctx = AppContext(settings=settings, vault=vault_for_settings(settings), reader=reader)
        body = body_of(CATALOG.named("search"), invoke(CATALOG.named("search"), ctx, raw))
        assert body["data"]["mode"] == raw.get("mode", "hybrid")
        return [r["path"] for r in body["data"]["results"]]
    finally:
        reader.close()


def test_a_folder_filter_keeps_the_semantic_order_of_its_notes(
    embedded_vault: tuple[Settings, Writer],
) -> None:
    settings, _ = embedded_vault
    q = "how do I keep my notes in sync on my phone"
    everything = _paths(settings, q=q, mode="semantic", group="note", limit=50)
    for folder in ("english", "中文", "日本語"):
        inside = [p for p in everything if p.startswith(folder + "/")]
        assert inside, folder
        assert _paths(settings, q=q, mode="semantic", group="note", limit=3, folder=folder) == inside[:3]
    hybrid = _paths(settings, q=q, group="note", limit=5, folder="中文")
    assert hybrid and all(p.startswith("中文/") for p in hybrid)
    assert _paths(settings, q=q, mode="semantic", tags=["no-such-tag"]) == []
