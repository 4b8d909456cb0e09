"""Both MCP protocol revisions with the real SDK client, over stdio and Streamable HTTP.

`legacy` is the 2025 initialize handshake (2025-11-25); `auto` probes `server/discover`
and adopts the stateless 2026-07-28 revision. Each session checks discovery, the tool
list, a call, a canonical error worded for MCP, an unknown tool and progress of a long call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from api.serverkit import ServerThread, http_mcp_client, stdio_mcp_client
from vault_agent.api.mcp_server import INSTRUCTIONS, listed_operations
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings

REVISIONS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
MISSING = "projects/alpha/nope.md"


async def _session(client_cm: Any) -> dict[str, Any]:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with client_cm as client:
        seen: dict[str, Any] = {
            "version": client.protocol_version,
            "server": client.server_info.name if client.server_info else None,
            "instructions": client.instructions,
            "tools": sorted(t.name for t in (await client.list_tools()).tools),
        }
        overview = await client.call_tool("vault_overview", {})
        seen["overview"] = (overview.is_error, sorted(overview.structured_content["data"]))
        missing = await client.call_tool("get_note_outline", {"path": MISSING})
        seen["missing"] = (missing.is_error, missing.structured_content)
        unknown = await client.call_tool("no_such_tool", {})
        seen["unknown"] = (unknown.is_error, unknown.structured_content)
        found = await client.call_tool("vault_find", {"query": "alpha"}, progress_callback=on_progress)
        seen["find"] = (found.is_error, "next_actions" in found.structured_content["data"])
    seen["progress"] = [m for _, _, m in progress if m and not m.startswith("vault_find still")]
    seen["progress_total"] = progress[-1][0] == progress[-1][1] if progress else None
    return seen


def _expected(mode: str) -> dict[str, Any]:
    return {
        "version": REVISIONS[mode],
        "server": "vault-agent",
        "instructions": INSTRUCTIONS,
        "tools": sorted(op.mcp_name for op in listed_operations(CATALOG, False, "default")),
        "overview": (
            False,
            ["chunkCount", "frontmatterFields", "indexFreshness", "noteCount", "topLevelFolders", "topTags"],
        ),
        "missing": (
            True,
            {
                "error": {
                    "code": "NOT_FOUND",
                    "message": f"no note or file is named '{MISSING}' (tried path, file name, title and alias); "
                    "call search with words from the note, or vault_tree to see its folders "
                    "(new notes appear after the next index)",
                }
            },
        ),
        "unknown": (
            True,
            {
                "error": {
                    "code": "INVALID_PARAMETER",
                    "message": "unknown tool; call tools/list for the tools of this server",
                }
            },
        ),
        "find": (False, True),
        "progress": ["vault_find started", "vault_find done"],
        "progress_total": True,
    }


@pytest.mark.parametrize("mode", list(REVISIONS))
def test_streamable_http_speaks_both_revisions(server: ServerThread, mode: str) -> None:
    seen = asyncio.run(_session(http_mcp_client(server.url, server.token, mode)))
    assert seen == _expected(mode)


@pytest.mark.parametrize("mode", list(REVISIONS))
def test_stdio_speaks_both_revisions(vault_settings: Settings, mode: str) -> None:
    seen = asyncio.run(_session(stdio_mcp_client(vault_settings, "--no-watch", mode=mode)))
    assert seen == _expected(mode)


def test_http_error_messages_keep_cli_words(server: ServerThread) -> None:
    """The same failure over HTTP names the CLI command, as the CLI prints it."""
    status, _, body = server.get_json(f"/note-outline?path={MISSING}")
    assert (status, body["error"]["message"]) == (
        404,
        f"no note or file is named '{MISSING}' (tried path, file name, title and alias); "
        "use 'search' with words from the note, or 'tree' to see its folders (new notes appear after the next index)",
    )


def test_write_calls_report_progress(tmp_path: Any) -> None:
    """A write (which may wait for the index) sends started/done progress to a client that asks."""
    from mcp import Client

    from vault_agent.api.mcp_server import build_mcp_server
    from vault_agent.api.operation import AppContext
    from vault_agent.paths import vault_for_settings
    from vault_agent.query.snapshot import SnapshotReader
    from vault_agent.server.context import close_context

    vault = tmp_path / "vault"
    vault.mkdir()
    settings = Settings(vault=vault, index_dir=tmp_path / "state", writes_enabled=True)
    vault_ = vault_for_settings(settings)
    ctx = AppContext(settings=settings, vault=vault_, reader=SnapshotReader(settings, vault_))
    notes: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append((progress, total, message))

    async def go() -> Any:
        async with Client(build_mcp_server(ctx, CATALOG), mode="legacy") as client:
            return await client.call_tool("vault_mkdir", {"path": "inbox"}, progress_callback=on_progress)

    try:
        result = asyncio.run(go())
    finally:
        close_context(ctx)
    assert (result.is_error, (vault / "inbox").is_dir()) == (False, True)
    messages = [m for _, _, m in notes if m and "still working" not in m]
    assert messages == ["vault_mkdir started", "vault_mkdir done"]
    assert notes[-1][0] == notes[-1][1]
