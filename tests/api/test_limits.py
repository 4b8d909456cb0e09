"""Over-long requests, Host case and log scrubbing: nothing secret is echoed or logged."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from api.serverkit import LogCapture, ServerThread
from vault_agent.api.http_limits import MAX_HEADER_FIELD_BYTES, MAX_REQUEST_LINE_BYTES
from vault_agent.api.logging_setup import Scrubber

SECRET = "sekrit-canary-7f3a"
MCP_INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
).encode()


def _raw(server: ServerThread, request: bytes) -> tuple[int, str, dict[str, str]]:
    """Send bytes as they are (http.client would refuse some) and read one response."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), body.decode("utf-8", "replace"), headers


@pytest.mark.parametrize(
    ("where", "status", "message"),
    [
        ("url", 414, f"the request line (URL) is over {MAX_REQUEST_LINE_BYTES} bytes"),
        ("header", 431, f"a request header is over {MAX_HEADER_FIELD_BYTES} bytes"),
    ],
)
def test_over_long_request_is_our_json_error_without_echo(
    server: ServerThread, logs: LogCapture, where: str, status: int, message: str
) -> None:
    filler = "x" * (MAX_REQUEST_LINE_BYTES + 100)
    path = f"/search?q={SECRET}{filler}" if where == "url" else "/overview"
    extra = f"X-Note: Bearer {SECRET}{filler}\r\n" if where == "header" else ""
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{extra}Connection: close\r\n\r\n"
    got_status, body, headers = _raw(server, req.encode())
    assert (got_status, json.loads(body)) == (status, {"error": {"code": "TOO_LARGE", "message": message}})
    assert headers.get("Content-Type", "").startswith("application/json")
    assert [ln for ln in logs.lines if SECRET in ln or "xxxxxxxx" in ln] == []


def test_malformed_request_is_json_400(server: ServerThread, logs: LogCapture) -> None:
    status, body, _ = _raw(server, f"GET /overview?{SECRET} HTTP/1.1\r\nHost\r\n\r\n".encode())
    assert status == 400 and json.loads(body)["error"]["code"] == "INVALID_PARAMETER"
    assert [ln for ln in logs.lines if SECRET in ln] == []


def test_mcp_accepts_the_host_header_in_any_case(server: ServerThread) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Host": f"LOCALHOST:{server.port}",
    }
    status, _, _ = server.request("POST", "/mcp", body=MCP_INIT, headers=headers)
    assert status == 200


def test_scrubbing_replaces_path_components_not_letters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scrub = Scrubber([("v", "<vault>"), ("st", "<index-dir>")])
    root = os.fspath(tmp_path)
    line = f"vivid view of {root}/v/a.md, '{root}/v' and {root}/st/x; {root}/vault and {root}/stash stay"
    assert scrub(line) == (
        f"vivid view of <vault>/a.md, '<vault>' and <index-dir>/x; {root}/vault and {root}/stash stay"
    )
