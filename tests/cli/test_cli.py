"""The CLI: `serve` as a real process, server-backed commands, exit codes, help."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api.serverkit import VAULT_AGENT, ServerThread, build_fixture_vault, make_context, serving
from typer.testing import CliRunner

from vault_agent.api.ops import CATALOG
from vault_agent.cli.command_table import COMMANDS
from vault_agent.cli.main import app
from vault_agent.config import Settings, load_settings
from vault_agent.indexer.lock import WriterLock, writer_lock_held
from vault_agent.server.context import close_context

PLAN = "projects/alpha/plan.md"


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    return subprocess.run(
        [VAULT_AGENT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**clean, **(env or {})},
    )


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return build_fixture_vault(tmp_path_factory.mktemp("cli"))


@pytest.fixture(scope="module")
def server(settings: Settings) -> Iterator[ServerThread]:
    with serving(settings) as thread:
        yield thread


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """`vault-agent serve` as a child process; always terminated."""

    def __init__(self, *args: str) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
        self.proc = subprocess.Popen(
            [VAULT_AGENT, "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean,
        )

    def first_line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err


def test_serve_port_0_prints_one_listening_line_and_stops_on_sigterm(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    serve = ServeProcess("--vault", str(settings.vault), "--port", "0")
    try:
        line = serve.first_line()
        assert line.startswith("listening on http://127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        assert port > 0
        token = settings.token_file.read_text().strip()
        # The web page's address, and no secret: services log stdout (issue 33).
        assert serve.first_line() == f"web: http://127.0.0.1:{port}/"
        assert stat.S_IMODE(settings.token_file.stat().st_mode) == 0o600
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/tags?limit=1", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read())
        assert body["data"]["tags"] == [{"tag": "project", "noteCount": 3}]
    finally:
        code, out, err = serve.stop()
    assert (code, out) == (0, "")
    logs = [json.loads(ln) for ln in err.splitlines() if ln.startswith("{")]
    requests = [ln for ln in logs if ln.get("event") == "request"]
    assert [(r["route"], r["status"]) for r in requests] == [("/tags", 200)]
    assert str(settings.vault) not in err and token not in err


def test_serve_on_a_busy_port_fails_cleanly(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = run_cli("serve", "--vault", str(settings.vault), "--port", str(port))
    # Issue 8 item 11: no INTERNAL and no traceback, but what happened and what to do.
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"error [INVALID_PARAMETER]: port {port} on 127.0.0.1 is already in use (another 'vault-agent "
        "serve'?); pick another with --port N, or --port 0 for any free port (it prints the one it got)\n"
    )
    assert str(settings.vault) not in proc.stderr


def test_serve_watch_beside_another_writer_exits_5(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    with WriterLock(settings.index_dir):
        proc = run_cli("serve", "--watch", "--vault", str(settings.vault), "--port", "0")
    assert (proc.returncode, proc.stdout) == (5, "")
    assert proc.stderr.splitlines()[-1] == (
        "error [INDEX_BUSY]: another vault-agent process is indexing this vault; "
        "wait for it to finish or stop it, then retry"
    )


def test_serve_watch_holds_the_writer_lock_until_stopped(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    serve = ServeProcess("--watch", "--vault", str(settings.vault), "--port", "0")
    try:
        assert serve.first_line().startswith("listening on http://127.0.0.1:")
        assert writer_lock_held(settings.index_dir)
    finally:
        code, _, _ = serve.stop(signal.SIGINT)
    assert code == 0
    assert not writer_lock_held(settings.index_dir)


def test_no_server_is_exit_6_with_how_to_start(settings: Settings) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    proc = run_cli("overview", "--vault", str(settings.vault), "--server", url)
    assert (proc.returncode, proc.stdout) == (6, "")
    assert proc.stderr == (
        f"error [SERVER_UNAVAILABLE]: no vault-agent server answers at {url}; "
        "start one with: vault-agent serve --watch --vault PATH (or pass --server URL)\n"
    )
    proc = run_cli("overview", "--json", "--vault", str(settings.vault), "--server", url)
    assert proc.returncode == 6
    assert json.loads(proc.stdout)["error"]["code"] == "SERVER_UNAVAILABLE"


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (["tree", "--depth", "0"], 2, "INVALID_PARAMETER"),
        (["get-note-outline", "../x.md"], 2, "INVALID_PATH"),
        (["overview", "--token", "wrong"], 3, "UNAUTHORIZED"),
        (["get-note-outline", "missing.md"], 4, "NOT_FOUND"),
    ],
)
def test_error_exit_codes(
    server: ServerThread, settings: Settings, args: list[str], code: int, error: str
) -> None:
    proc = run_cli(*args, "--json", "--vault", str(settings.vault), "--server", server.url)
    assert proc.returncode == code
    assert json.loads(proc.stdout)["error"]["code"] == error
    if error == "UNAUTHORIZED":
        assert proc.stdout == server.request("GET", "/overview", token="wrong")[2] + "\n"  # verbatim


def test_index_not_found_is_exit_4(tmp_path: Path) -> None:
    vault = tmp_path / "empty-vault"
    vault.mkdir()
    settings = load_settings({"vault": vault}, env={})
    ctx = make_context(settings)
    thread = ServerThread(ctx).start()
    try:
        proc = run_cli("overview", "--vault", str(vault), "--server", thread.url)
    finally:
        thread.stop()
        close_context(ctx)
    assert proc.returncode == 4
    assert proc.stderr == "error [INDEX_NOT_FOUND]: no index snapshot exists yet; run 'vault-agent index'\n"


@pytest.mark.parametrize("command", [["index"], ["reindex"], ["status"], ["serve", "--port", "0"], ["mcp"]])
def test_missing_vault_folder_is_not_created(tmp_path: Path, command: list[str]) -> None:
    """A --vault that does not exist fails (NOT_FOUND, exit 4) instead of indexing a new empty
    folder, and the error does not echo the path the caller sent."""
    missing = tmp_path / "no-such-vault"
    proc = run_cli(*command, "--vault", str(missing), "--json")
    assert proc.returncode == 4
    assert json.loads(proc.stdout) == {
        "error": {
            "code": "NOT_FOUND",
            "message": "the vault folder does not exist; pass an existing folder with --vault",
        }
    }
    assert not missing.exists() and str(tmp_path) not in proc.stdout + proc.stderr


def test_local_internal_error_log_carries_no_absolute_path(tmp_path: Path) -> None:
    """A local command that fails unexpectedly (state dir under a regular file) exits 1 with
    INTERNAL; its logged traceback goes through the path scrubber like serve's log."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    blocker = tmp_path / "plain-file"
    blocker.write_text("x")
    proc = run_cli("index", "--vault", str(vault), "--index-dir", str(blocker / "idx"), "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "INTERNAL"
    assert "command failed (incident" in proc.stderr and str(tmp_path) not in proc.stderr


def test_token_is_read_from_the_state_dir_for_a_local_server(
    server: ServerThread, settings: Settings
) -> None:
    proc = run_cli("tags", "--limit", "2", "--json", "--server", server.url, cwd=settings.vault)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == server.request("GET", "/tags?limit=2")[2] + "\n"


def test_human_output_and_freshness_on_stderr(server: ServerThread, settings: Settings) -> None:
    proc = run_cli("get-note-outline", PLAN, "--vault", str(settings.vault), "--server", server.url)
    assert proc.returncode == 0
    assert "Alpha plan" in proc.stdout and not proc.stdout.lstrip().startswith("{")
    assert proc.stderr.splitlines()[0] == "index freshness: fresh"
    assert proc.stderr.splitlines()[1].startswith("warning [NEXT_READ]: read one section with vault_read(")
    proc = run_cli(
        "tree", "--depth", "1", "--limit", "3", "--vault", str(settings.vault), "--server", server.url
    )
    assert proc.returncode == 0
    assert proc.stderr.startswith("warning [TREE_LIMIT_EXCEEDED]: ")


@pytest.mark.parametrize(
    ("command", "route"),
    [
        ("get-note-outline", "/note-outline"),
        ("get-document-tree", "/document-tree"),
        ("get-section-source", "/section-source"),
        ("get-metadata-facets", "/metadata-facets"),
    ],
)
def test_raw_contracts_with_json_keep_freshness_on_stderr(
    server: ServerThread, settings: Settings, command: str, route: str
) -> None:
    """Issue 8 item 6 (SPEC): the freshness line goes to stderr always, --json included;
    stdout stays exactly the raw contract."""
    proc = run_cli(command, PLAN, "--json", "--vault", str(settings.vault), "--server", server.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == "index freshness: fresh"  # then the NEXT_READ hint
    assert proc.stdout == server.request("GET", f"{route}?path=projects/alpha/plan.md")[2] + "\n"


def test_env_server_and_token(server: ServerThread, settings: Settings) -> None:
    env = {"VAULT_AGENT_SERVER": server.url, "VAULT_AGENT_TOKEN": server.token}
    proc = run_cli("overview", "--json", env=env, cwd=Path("/"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == server.request("GET", "/overview")[2] + "\n"


def test_every_generated_command_has_help_with_an_example() -> None:
    runner = CliRunner()
    assert COMMANDS
    for name in sorted(COMMANDS) + ["serve", "mcp"]:
        result = runner.invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, name
        assert "Example: vault-agent " + name in " ".join(result.output.split()), name
        assert "--json" in result.output, name


def test_serve_process_speaks_mcp_over_http_with_the_real_client(tmp_path: Path) -> None:
    import asyncio

    from api.serverkit import http_mcp_client

    settings = build_fixture_vault(tmp_path)
    serve = ServeProcess("--vault", str(settings.vault), "--port", "0", "--allow-writes")
    try:
        url = serve.first_line().removeprefix("listening on ")
        token = settings.token_file.read_text().strip()

        async def go() -> tuple[list[str], Any]:
            async with http_mcp_client(url, token) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                return tools, await client.call_tool("get_note_outline", {"path": PLAN})

        tools, result = asyncio.run(go())
    finally:
        code, _, _ = serve.stop()
    assert code == 0
    assert {"vault_overview", "get_note_outline"} <= set(tools)
    assert {op.mcp_name for op in CATALOG.of_kind("write") if op.profile == "default"} <= set(tools)
    assert result.is_error is False and result.structured_content["path"] == PLAN


def test_stdio_mcp_takes_the_writer_lock_and_releases_it(tmp_path: Path) -> None:
    import asyncio

    from api.serverkit import stdio_mcp_client

    settings = build_fixture_vault(tmp_path)
    held: list[bool] = []

    async def go() -> Any:
        async with stdio_mcp_client(settings) as client:
            held.append(writer_lock_held(settings.index_dir))
            tools = [t.name for t in (await client.list_tools()).tools]
            return tools, await client.call_tool("vault_overview", {})

    tools, result = asyncio.run(go())
    assert held == [True]
    assert not writer_lock_held(settings.index_dir)
    assert not [t for t in tools if t in {op.mcp_name for op in CATALOG.of_kind("write")}]
    assert result.is_error is False and result.structured_content["data"]["noteCount"] == 15
