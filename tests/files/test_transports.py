"""The write tools over the real aiohttp server and the real MCP SDK client (Streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api.serverkit import ServerThread, http_mcp_client

from vault_agent.api.operation import AppContext
from vault_agent.config import Settings
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.server.context import close_context

from .conftest import sha, tree

WRITE_TOOLS = [
    "vault_create",
    "vault_delete",
    "vault_edit",
    "vault_mkdir",
    "vault_move",
    "vault_replace",
    "vault_write",
]
AGENT_WRITE = ["create_folder", "delete", "edit_file", "move", "write_file"]
AGENT_READ = ["get_file_info", "list_files", "read_file", "search_files"]


def _server(vault_dir: Path, **update: Any) -> tuple[ServerThread, AppContext]:
    settings = Settings(vault=vault_dir, index_dir=vault_dir.parent / "state", **update)
    vault = vault_for_settings(settings)
    ctx = AppContext(settings=settings, vault=vault, reader=SnapshotReader(settings, vault))
    return ServerThread(ctx).start(), ctx


@pytest.fixture
def server(vault_dir: Path) -> Iterator[ServerThread]:
    srv, ctx = _server(vault_dir, writes_enabled=True, tool_profile="agent-files")
    try:
        yield srv
    finally:
        srv.stop()
        close_context(ctx)


def _post(srv: ServerThread, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    status, _, text = srv.request("POST", path, body=json.dumps(body).encode())
    return status, json.loads(text)


def test_http_write_routes(server: ServerThread, vault_dir: Path) -> None:
    status, body = _post(server, "/files/create", {"path": "h/new.md", "content": "hello\n"})
    assert status == 200
    assert body["data"]["written_path"] == "h/new.md"
    digest = sha(b"hello\n")
    status, body = _post(
        server,
        "/files/edit",
        {"path": "h/new.md", "oldText": "hello", "newText": "bye", "expectedSha256": digest},
    )
    assert (status, body["data"]["diff"]) == (
        200,
        "--- a/h/new.md\n+++ b/h/new.md\n@@ -1 +1 @@\n-hello\n+bye\n",
    )
    assert _post(
        server,
        "/files/edit",
        {"path": "h/new.md", "oldText": "bye", "newText": "x", "expectedSha256": digest},
    ) == (
        409,
        {
            "error": {
                "code": "CONFLICT",
                "message": "'h/new.md' changed since it was read (sha256 differs from expected_sha256); read it again and retry",
            }
        },
    )
    status, body = _post(server, "/files/write", {"path": "h/new.md", "content": "x", "mode": "prepend"})
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMETER")
    status, body = _post(server, "/files/create", {"path": ".system/x.md", "content": "x"})
    assert (status, body["error"]["code"]) == (403, "FORBIDDEN")
    status, body = _post(server, "/files/move", {"source": "h/new.md", "destination": "k/new.md"})
    assert (status, body["data"]["moved"]) == (200, True)
    status, body = _post(server, "/files/delete", {"path": "k/new.md"})
    assert (status, body["data"]["trashed_to"]) == (200, ".trash/new.md")
    status, body = _post(server, "/files/mkdir", {"path": "m/n"})
    assert (status, body["data"]["created"]) == (200, True)
    status, _, text = server.request("GET", "/info?path=m")
    assert (status, json.loads(text)["data"]["type"]) == (200, "folder")
    assert (vault_dir / ".trash/new.md").read_text() == "bye\n"


def test_http_writes_disabled(vault_dir: Path) -> None:
    srv, ctx = _server(vault_dir)
    try:
        status, body = _post(srv, "/files/create", {"path": "x.md", "content": "x"})
        assert (status, body["error"]["code"]) == (403, "FORBIDDEN")
        assert not (vault_dir / "x.md").exists()
    finally:
        srv.stop()
        close_context(ctx)


async def _mcp(srv: ServerThread, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    async with http_mcp_client(srv.url, srv.token) as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, args) for name, args in calls]
    return tools, results


def test_mcp_write_and_alias_tools(server: ServerThread, vault_dir: Path) -> None:
    calls = [
        ("vault_create", {"path": "m/a.md", "content": "one\n"}),
        ("vault_write", {"path": "m/a.md", "content": "two\n", "mode": "append"}),
        ("write_file", {"path": "m/b.md", "content": "[[a]]\n"}),
        ("move", {"source": "m/a.md", "destination": "m/c.md"}),
        ("read_file", {"path": "M/B.md"}),
        ("vault_write", {"path": "daily/2024-01-01.md", "content": "x", "mode": "append"}),
    ]
    tools, results = asyncio.run(_mcp(server, calls))
    names = {t.name: t for t in tools}
    assert set(WRITE_TOOLS + AGENT_WRITE + AGENT_READ + ["vault_stat"]) <= set(names)
    hints = {
        n: (names[n].annotations.destructive_hint, names[n].annotations.read_only_hint)
        for n in ("vault_delete", "vault_create", "delete", "vault_stat")
    }
    assert hints == {
        "vault_delete": (True, False),
        "vault_create": (False, False),
        "delete": (True, False),
        "vault_stat": (False, True),
    }
    assert [r.is_error for r in results] == [False, False, False, False, False, True]
    assert results[1].structured_content["data"]["size_bytes"] == 8
    assert (
        results[3].structured_content["data"]["message"]
        == "moved m/a.md to m/c.md; links rewritten in 1 files"
    )
    assert results[4].structured_content["data"]["content"] == "1\t[[c]]\n"
    assert json.loads(results[5].content[0].text)["error"]["code"] == "CONFLICT"
    assert (vault_dir / "m/c.md").read_text() == "one\ntwo\n"


def test_mcp_lists_no_write_tools_when_disabled(vault_dir: Path) -> None:
    srv, ctx = _server(vault_dir, tool_profile="agent-files")
    before = tree(vault_dir)
    calls = [
        ("vault_create", {"path": "x.md", "content": "x"}),
        ("vault_write", {"path": "notes/a.md", "content": "x", "mode": "overwrite"}),
        ("vault_delete", {"path": "notes/a.md"}),
        ("write_file", {"path": "x.md", "content": "x"}),
    ]
    try:
        tools, results = asyncio.run(_mcp(srv, calls))
    finally:
        srv.stop()
        close_context(ctx)
    names = {t.name for t in tools}
    assert names.isdisjoint(WRITE_TOOLS + AGENT_WRITE)
    assert set(AGENT_READ + ["vault_stat"]) <= names
    # Calling an unlisted write tool anyway: the canonical FORBIDDEN, as on HTTP and the CLI.
    forbidden = {
        "error": {
            "code": "FORBIDDEN",
            "message": "write tools are disabled; start the server with --allow-writes to enable them",
        }
    }
    assert [(r.is_error, json.loads(r.content[0].text)) for r in results] == [(True, forbidden)] * 4
    assert tree(vault_dir) == before
