"""Security probes (RELIABILITY.md): token, Host, Origin, body cap, traversal, leaks, token file."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.serverkit import CANARY, LogCapture, ServerThread, make_context
from api.tempops import TEST_CATALOG
from vault_agent.api.security import is_loopback_host
from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter
from vault_agent.server.context import close_context
from vault_agent.server.http_server import start_server

UNAUTHORIZED = {
    "error": {
        "code": "UNAUTHORIZED",
        "message": "missing or wrong bearer token; send the header 'Authorization: Bearer <token>'; "
        "the token is in the file <vault>/.vault-agent/token (the vault-agent CLI reads it by itself)",
    }
}
BAD_HOST = {
    "error": {
        "code": "FORBIDDEN",
        "message": "the Host header is not allowed; call the server by its loopback address",
    }
}
BAD_ORIGIN = {
    "error": {
        "code": "FORBIDDEN",
        "message": "this Origin is not allowed; add it to server.allowed_origins to permit it",
    }
}
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
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SEEN_BODIES: list[str] = []  # every body of this module, scanned for leaks at the end


def _call(server: ServerThread, method: str, path: str, **kw: object) -> tuple[int, dict[str, str], str]:
    status, headers, text = server.request(method, path, **kw)  # type: ignore[arg-type]
    SEEN_BODIES.append(text)
    return status, headers, text


@pytest.mark.parametrize("token", [None, "wrong", ""])
@pytest.mark.parametrize(
    "path", ["/overview", "/note-outline?path=projects/alpha/plan.md", "/mcp", "/no-such-route"]
)
def test_missing_or_wrong_token_is_401(server: ServerThread, token: str | None, path: str) -> None:
    method, body = ("POST", MCP_INIT) if path == "/mcp" else ("GET", None)
    headers = MCP_HEADERS if path == "/mcp" else {}
    status, got, text = _call(server, method, path, token=token, body=body, headers=headers)
    # RFC 6750: the challenge names the realm, how to send the token and where it is; a token
    # that was sent but is wrong adds error=.
    error = ', error="invalid_token"' if token is not None else ""
    challenge = (
        f'Bearer realm="vault-agent"{error}, error_description="send Authorization: Bearer <token>; '
        'the token is in the file <vault>/.vault-agent/token"'
    )
    assert (status, json.loads(text), got.get("WWW-Authenticate")) == (401, UNAUTHORIZED, challenge)


def test_other_auth_schemes_are_401(server: ServerThread) -> None:
    status, _, text = _call(
        server, "GET", "/overview", token=None, headers={"Authorization": f"Basic {server.token}"}
    )
    assert (status, json.loads(text)) == (401, UNAUTHORIZED)


@pytest.mark.parametrize(
    "host", ["evil.com", "127.0.0.1.nip.io:{port}", "127.0.0.1:1", "evil.com:{port}", ""]
)
@pytest.mark.parametrize("path", ["/overview", "/mcp"])
def test_foreign_host_is_403(server: ServerThread, host: str, path: str) -> None:
    method, body = ("POST", MCP_INIT) if path == "/mcp" else ("GET", None)
    headers = {**(MCP_HEADERS if path == "/mcp" else {}), "Host": host.format(port=server.port)}
    status, _, text = _call(server, method, path, body=body, headers=headers)
    assert (status, json.loads(text)) == (403, BAD_HOST)


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_loopback_hosts_with_our_port_pass(server: ServerThread, host: str) -> None:
    status, _, _ = _call(server, "GET", "/overview", headers={"Host": host.format(port=server.port)})
    assert status == 200


@pytest.mark.parametrize(
    "origin",
    ["http://evil.com", "null", "http://127.0.0.1:1", "http://localhost:1", "https://localhost:{port}"],
)
@pytest.mark.parametrize("path", ["/overview", "/mcp"])
def test_foreign_origin_is_403(server: ServerThread, origin: str, path: str) -> None:
    method, body = ("POST", MCP_INIT) if path == "/mcp" else ("GET", None)
    headers = {**(MCP_HEADERS if path == "/mcp" else {}), "Origin": origin.format(port=server.port)}
    status, headers_out, text = _call(server, method, path, body=body, headers=headers)
    assert (status, json.loads(text)) == (403, BAD_ORIGIN)
    assert "Access-Control-Allow-Origin" not in headers_out


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_own_loopback_origin_passes(server: ServerThread, origin: str) -> None:
    """RELIABILITY's probe: the right origin on the wrong port is refused; on ours it passes."""
    headers = {"Origin": origin.format(port=server.port)}
    status, _, _ = _call(server, "GET", "/overview", headers=headers)
    assert status == 200


@pytest.fixture
def cors_server(vault_settings: Settings) -> Iterator[ServerThread]:
    settings = dataclasses.replace(vault_settings, allowed_origins=("http://app.example.test",))
    ctx = make_context(settings)
    thread = ServerThread(ctx, catalog=TEST_CATALOG).start()
    yield thread
    thread.stop()
    close_context(ctx)


def test_cors_only_for_configured_origins(cors_server: ServerThread, server: ServerThread) -> None:
    origin = {"Origin": "http://app.example.test"}
    status, headers, _ = _call(cors_server, "GET", "/overview", headers=origin)
    assert (status, headers["Access-Control-Allow-Origin"], headers["Vary"]) == (
        200,
        "http://app.example.test",
        "Origin",
    )
    preflight = {**origin, "Access-Control-Request-Method": "GET"}
    status, headers, _ = _call(cors_server, "OPTIONS", "/overview", token=None, headers=preflight)
    assert (status, headers["Access-Control-Allow-Origin"]) == (204, "http://app.example.test")
    assert "Authorization" in headers["Access-Control-Allow-Headers"]
    status, headers, text = _call(
        cors_server, "POST", "/mcp", body=MCP_INIT, headers={**MCP_HEADERS, **origin}
    )
    assert (status, headers["Access-Control-Allow-Origin"]) == (200, "http://app.example.test")
    assert '"serverInfo"' in text
    # The default server has no CORS at all: same-machine clients without Origin only.
    status, headers, _ = _call(server, "GET", "/overview")
    assert status == 200 and not [h for h in headers if h.lower().startswith("access-control-")]


def test_body_over_4_mib_is_413(vault_settings: Settings) -> None:
    big = b'{"path": "' + b"a" * (4 * 1024 * 1024) + b'"}'
    ctx = make_context(vault_settings)
    thread = ServerThread(ctx, catalog=TEST_CATALOG).start()
    try:
        results = [
            _call(thread, "POST", "/test-probe", body=big),
            _call(thread, "POST", "/mcp", body=big, headers=MCP_HEADERS),
        ]
    finally:
        thread.stop()
        close_context(ctx)
    expected = {
        "error": {"code": "TOO_LARGE", "message": "request body over the 4 MiB limit; send less data"}
    }
    assert [(s, json.loads(t)) for s, _, t in results] == [(413, expected), (413, expected)]


TRAVERSAL = [
    "../x.md",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e/%2e%2e/etc/passwd",
    "/etc/passwd",
    "C:%5Cx.md",
    "%5C%5Csrv%5Cshare%5Cx.md",
    "~/x.md",
    "a%00b.md",
    "a/../../b.md",
    "projects/../../outside.md",
]


@pytest.mark.parametrize("raw", TRAVERSAL)
@pytest.mark.parametrize("route", ["/note-outline", "/document-tree", "/section-source", "/metadata-facets"])
def test_traversal_is_invalid_path(server: ServerThread, raw: str, route: str) -> None:
    status, _, text = _call(server, "GET", f"{route}?path={raw}")
    body = json.loads(text)
    assert (status, body["error"]["code"]) == (400, "INVALID_PATH")
    assert "/etc" not in body["error"]["message"].replace("etc/passwd", "")


def test_symlink_out_of_the_vault_is_not_served(
    server: ServerThread, vault_settings: Settings, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(f"# Outside\n{CANARY}\n", encoding="utf-8")
    link = Path(vault_settings.vault) / "link-out.md"
    link.symlink_to(outside)
    try:
        status, _, text = _call(server, "GET", "/note-outline?path=link-out.md")
    finally:
        link.unlink()
    assert status in (400, 404)
    assert json.loads(text)["error"]["code"] in ("INVALID_PATH", "NOT_FOUND")


def test_token_file_is_created_0600_and_reused(fresh_settings: Settings) -> None:
    ctx = make_context(fresh_settings)
    first = ServerThread(ctx).start()
    token = first.token
    first.stop()
    mode = stat.S_IMODE(os.stat(fresh_settings.token_file).st_mode)
    assert (mode, fresh_settings.token_file.read_text().strip()) == (0o600, token)
    second = ServerThread(ctx).start()
    try:
        assert second.token == token
        assert second.request("GET", "/overview")[0] == 200
    finally:
        second.stop()
        close_context(ctx)


def test_configured_token_wins_and_writes_no_file(fresh_settings: Settings) -> None:
    settings = dataclasses.replace(fresh_settings, token="configured-token-123")
    ctx = make_context(settings)
    thread = ServerThread(ctx, catalog=TEST_CATALOG).start()
    try:
        assert thread.request("GET", "/overview", token="configured-token-123")[0] == 200
        assert thread.request("GET", "/overview", token="other")[0] == 401
    finally:
        thread.stop()
        close_context(ctx)
    assert not settings.token_file.exists()


def test_non_loopback_bind_needs_an_explicit_token(fresh_settings: Settings) -> None:
    ctx = make_context(fresh_settings)
    try:
        with pytest.raises(InvalidParameter, match="non-loopback address needs an explicit token"):
            asyncio.run(start_server(ctx, "0.0.0.0", 0))
    finally:
        close_context(ctx)
    assert not fresh_settings.token_file.exists()


def test_binds_loopback_only(server: ServerThread) -> None:
    assert server.server is not None
    addresses = server.server.runner.addresses
    assert addresses and all(is_loopback_host(addr[0]) for addr in addresses)


def test_nothing_private_leaks_into_bodies_or_logs(
    server: ServerThread, logs: LogCapture, vault_settings: Settings
) -> None:
    for path in (
        "/overview",
        "/tree?depth=10",
        "/note-outline?path=projects/alpha/secret-notes.md",
        "/facets",
    ):
        _call(server, "GET", path)
    _call(server, "GET", "/note-outline?path=" + str(Path(vault_settings.vault).resolve()) + "/a.md")
    secrets = [CANARY, str(vault_settings.vault), str(Path(vault_settings.vault).resolve()), server.token]
    if len(os.path.expanduser("~")) > 1:
        secrets.append(os.path.expanduser("~") + "/")
    texts = SEEN_BODIES + logs.lines
    assert len(texts) > 50
    assert [(s, t[:120]) for t in texts for s in secrets if s in t] == []


def test_cli_pointed_at_another_vaults_server_says_so(server: ServerThread, tmp_path: Path) -> None:
    """Not "wrong token": the server compares the vault the CLI names (X-Vault-Id) with its own."""
    import subprocess

    from api.serverkit import VAULT_AGENT

    other = tmp_path / "other-vault"
    other.mkdir()
    (other / "a.md").write_text("# A\n", encoding="utf-8")
    proc = subprocess.run(
        [VAULT_AGENT, "overview", "--vault", str(other), "--server", server.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
    )
    same = subprocess.run(
        [
            VAULT_AGENT,
            "overview",
            "--json",
            "--vault",
            str(server.ctx.settings.vault),
            "--server",
            server.url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
    )
    assert (proc.returncode, same.returncode) == (8, 0)
    assert "serves another vault than the one asked for" in proc.stderr
    assert "token" not in proc.stderr and str(other) not in proc.stderr
