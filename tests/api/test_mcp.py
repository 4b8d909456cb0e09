"""MCP with the real SDK client: Streamable HTTP at /mcp (legacy and modern) and stdio."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from api.serverkit import ServerThread, http_mcp_client, make_context, stdio_mcp_client
from api.tempops import TEST_CATALOG
from vault_agent.api.invoke import dump_json
from vault_agent.api.mcp_server import build_mcp_server, listed_operations
from vault_agent.api.operation import Operation
from vault_agent.api.ops import CATALOG, notes
from vault_agent.config import Settings
from vault_agent.indexer.lock import WriterLock
from vault_agent.server.context import close_context

PLAN = "projects/alpha/plan.md"
ToolCalls = list[tuple[str, dict[str, Any]]]  # (tool name, arguments), called in order


def _dump(result: Any) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _session(client_cm: Any, calls: ToolCalls) -> tuple[list[Any], list[Any]]:
    async with client_cm as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, args) for name, args in calls]
    return tools, results


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_http_mcp_lists_the_registry_and_answers_like_http(server: ServerThread, mode: str) -> None:
    calls: ToolCalls = [
        ("vault_overview", {}),
        ("vault_tree", {"depth": 1, "direct_only": True}),
        ("get_note_outline", {"path": PLAN}),
    ]
    tools, results = asyncio.run(_session(http_mcp_client(server.url, server.token, mode), calls))
    expected = sorted(
        op.mcp_name for op in CATALOG if op.agent_tool and op.profile == "default" and op.kind == "read"
    )
    assert sorted(t.name for t in tools) == expected
    by_name = {op.mcp_name: op for op in CATALOG}
    for tool in tools:
        assert tool.description == by_name[tool.name].description
        harmless = not by_name[tool.name].side_effect  # send_message / end_conversation are not
        # The side-effect tools leave out readOnlyHint/idempotentHint: false is MCP's default.
        assert _dump(tool.annotations) == (
            {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
            if harmless
            else {"destructiveHint": False}
        )
        # The title is on the wire (issue 33: clients show it); no outputSchema (issue 23).
        assert (tool.title, tool.output_schema) == (by_name[tool.name].title, None)
    tree = next(t for t in tools if t.name == "vault_tree")
    props = tree.input_schema["properties"]
    assert sorted(props) == ["depth", "direct_only", "limit"]
    assert (props["depth"]["minimum"], props["depth"]["maximum"], props["limit"]["maximum"]) == (1, 10, 500)

    http_bodies = [
        server.get_json("/overview")[2],
        server.get_json("/tree?depth=1&directOnly=true")[2],
        server.get_json(f"/note-outline?path={PLAN}")[2],
    ]
    for result, body in zip(results, http_bodies, strict=True):
        assert result.is_error is False
        assert result.structured_content == body
        assert [c.text for c in result.content] == [dump_json(body)]
    outline_meta = results[2].meta or {}
    assert outline_meta["indexFreshness"] == "fresh"
    assert [w["code"] for w in outline_meta["warnings"]] == ["NEXT_READ"]  # the read that follows
    assert "indexFreshness" not in (results[0].meta or {})


def test_http_mcp_errors_are_the_canonical_object(server: ServerThread) -> None:
    calls: ToolCalls = [
        ("get_note_outline", {"path": "../escape.md"}),
        ("vault_tree", {"depth": 99}),
        ("vault_tags", {"bogus": 1}),
    ]
    _, results = asyncio.run(_session(http_mcp_client(server.url, server.token), calls))
    expected = [
        {"error": {"code": "INVALID_PATH", "message": "path leaves the vault root"}},
        {
            "error": {
                "code": "INVALID_PARAMETER",
                "message": "parameter 'depth' must be an integer from 1 to 10",
            }
        },
        {
            "error": {
                "code": "INVALID_PARAMETER",
                "message": "unknown parameter 'bogus'; the parameters are: limit",
            }
        },
    ]
    assert [(r.is_error, r.structured_content, r.content[0].text) for r in results] == [
        (True, e, dump_json(e)) for e in expected
    ]


def test_json_text_arguments_are_accepted(vault_settings: Settings) -> None:
    ctx = make_context(vault_settings)
    server = build_mcp_server(ctx, TEST_CATALOG)
    from mcp import Client

    async def go() -> Any:
        async with Client(server) as client:
            return await client.call_tool(
                "test_probe",
                {"path": "a.md", "labels": '["x"]', "span": '{"start_line": 2, "end_line": 3}'},
            )

    result = asyncio.run(go())
    close_context(ctx)
    assert result.structured_content == {
        "data": {
            "path": "a.md",
            "span": {"startLine": 2, "endLine": 3},
            "labels": ["x"],
            "options": {},
            "limit": 10,
        },
        "warnings": [],
    }


def test_write_tools_listed_only_when_enabled(vault_settings: Settings) -> None:
    alias = Operation(
        name="test-alias",
        mcp_name="test_read_file",
        http_method="GET",
        http_path="/test-alias",
        params=notes.GET_NOTE_OUTLINE.params,
        func=lambda _c, _p: None,  # type: ignore[arg-type,return-value]
        description="Test only: an agent-files alias.",
        profile="agent-files",
        mcp_only=True,
    )
    catalog = TEST_CATALOG.with_operations(alias)
    off = {op.mcp_name for op in listed_operations(catalog, False, "default")}
    on = {op.mcp_name: op for op in listed_operations(catalog, True, "default")}
    files = {op.mcp_name for op in listed_operations(catalog, False, "agent-files")}
    ctx = make_context(dataclasses.replace(vault_settings, writes_enabled=True))
    tools = asyncio.run(_list_inproc(build_mcp_server(ctx, catalog)))
    close_context(ctx)
    assert "test_write" not in off and "test_read_file" not in off
    assert "test_write" in on and "test_read_file" not in on
    assert "test_read_file" in files and "test_write" not in files
    write_tool = next(t for t in tools if t.name == "test_write")
    assert _dump(write_tool.annotations) == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }


async def _list_inproc(server: Any) -> list[Any]:
    from mcp import Client

    async with Client(server) as client:
        return (await client.list_tools()).tools


def test_stdio_mcp_serves_the_same_bodies_as_http(fresh_settings: Settings) -> None:
    stdio_settings = fresh_settings
    calls: ToolCalls = [
        ("vault_overview", {}),
        ("vault_tags", {"limit": 3}),
        ("get_note_outline", {"path": PLAN}),
    ]
    tools, results = asyncio.run(_session(stdio_mcp_client(stdio_settings, "--no-watch"), calls))
    assert sorted(t.name for t in tools) == sorted(
        op.mcp_name for op in listed_operations(CATALOG, False, "default")
    )
    ctx = make_context(stdio_settings, pinned=None)
    thread = ServerThread(ctx).start()
    try:
        for (name, args), result in zip(calls, results, strict=True):
            op = next(o for o in CATALOG if o.mcp_name == name)
            query = "&".join(f"{k}={v}" for k, v in args.items())
            status, _, body = thread.get_json(f"{op.http_path}?{query}")
            # Freshness may differ while the first stat scan runs; the rest must match.
            assert status == 200 and result.is_error is False
            assert _strip_freshness(result.structured_content) == _strip_freshness(body)
            assert result.content[0].text == dump_json(result.structured_content)
    finally:
        thread.stop()
        close_context(ctx)


def _strip_freshness(body: Any) -> Any:
    if isinstance(body, dict):
        if "data" in body and "warnings" in body:
            return {
                "data": _strip_freshness(body["data"]),
                "warnings": [w for w in body["warnings"] if not w["code"].startswith("INDEX_")],
            }
        return {k: v for k, v in body.items() if k != "indexFreshness"}
    return body


def test_stdio_mcp_beside_another_writer_serves_read_only(fresh_settings: Settings, tmp_path: Path) -> None:
    stdio_settings = fresh_settings
    lock = WriterLock(stdio_settings.index_dir)
    lock.acquire()
    err_path = tmp_path / "stderr.txt"
    try:
        with err_path.open("w") as errlog:
            from mcp import Client
            from mcp.client.stdio import stdio_client

            client = stdio_mcp_client(stdio_settings)
            params = client.server

            async def go() -> Any:
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as c:  # type: ignore[arg-type]
                    return await c.call_tool("get_note_outline", {"path": PLAN})

            result = asyncio.run(go())
    finally:
        lock.release()
    assert result.is_error is False and result.structured_content["path"] == PLAN
    lines = [ln for ln in err_path.read_text().splitlines() if "read-only" in ln]
    assert lines == [
        "vault-agent mcp: another vault-agent process is indexing this vault; serving read-only from its snapshots"
    ]
    assert json.dumps(result.structured_content).count(str(stdio_settings.vault)) == 0
