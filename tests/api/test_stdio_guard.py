"""Over a real `vault-agent mcp` process: a JSON-RPC batch (removed from MCP) and a line
that is not JSON get a JSON-RPC error reply, and the session carries on."""

from __future__ import annotations

import json
from pathlib import Path

from conversations.kit import RawMcp

from api.serverkit import build_fixture_vault


def test_batch_and_garbage_lines_get_an_error_reply_and_the_session_goes_on(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    mcp = RawMcp(settings, "--no-watch")
    try:
        mcp.initialize()
        batch = [
            {"jsonrpc": "2.0", "id": 41, "method": "ping"},
            {"jsonrpc": "2.0", "id": 42, "method": "ping"},
        ]
        mcp.send_line(json.dumps(batch))
        assert mcp.next_message() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "batches are not supported (MCP removed JSON-RPC batching); send one JSON-RPC message per line",
            },
        }
        mcp.send_line("{not json")
        assert mcp.next_message()["error"]["code"] == -32700
        mcp.send_line(json.dumps({"jsonrpc": "2.0", "id": 5}))  # JSON, but not a message
        assert mcp.next_message()["error"] == {
            "code": -32600,
            "message": "invalid request: the line is not a JSON-RPC 2.0 message",
        }
        status = mcp.call_tool("vault_status", {})
        assert status["structuredContent"]["data"]["noteCount"] > 0
    finally:
        assert mcp.close() == 0
