"""The catalog tables in docs/http-api.md, docs/mcp.md and docs/cli.md match the code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from vault_agent.api.ops import CATALOG

ROOT = Path(__file__).resolve().parents[2]


def test_generated_doc_tables_are_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "ops" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    gen_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_docs)
    stale = [
        rel
        for rel, (name, block) in gen_docs.BLOCKS.items()
        if gen_docs.render(ROOT / rel, name, block(CATALOG)) != (ROOT / rel).read_text(encoding="utf-8")
    ]
    assert stale == [], "run: .venv/bin/python ops/gen_docs.py"


def test_every_http_route_and_tool_is_documented() -> None:
    http_doc = (ROOT / "docs" / "http-api.md").read_text(encoding="utf-8")
    mcp_doc = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    missing = [op.http_path for op in CATALOG if not op.mcp_only and f"`{op.http_path}`" not in http_doc]
    missing += [op.mcp_name for op in CATALOG if op.agent_tool and f"### {op.mcp_name}\n" not in mcp_doc]
    assert missing == []


def test_routes_outside_the_registry_are_documented() -> None:
    """Routes the app mounts beside the catalog's (conversations) are documented by hand."""
    from aiohttp import web

    from vault_agent.api.messages_sse import add_conversation_routes

    app = web.Application()
    add_conversation_routes(app)
    routes = {(r.method, r.resource.canonical) for r in app.router.routes() if r.resource is not None}
    http_doc = (ROOT / "docs" / "http-api.md").read_text(encoding="utf-8")
    generated = http_doc.split("<!-- BEGIN GENERATED: routes -->")[0]
    assert routes == {
        ("GET", "/messages/stream"),
        ("GET", "/conversations/{id}"),
        ("GET", "/conversations/{id}/questions"),
        ("POST", "/conversations/{id}/reply"),
        ("POST", "/conversations/{id}/undo"),
    }
    assert [r for r in sorted(routes) if f"`{r[0]} {r[1]}`" not in generated] == []
