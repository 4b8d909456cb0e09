"""Suggested commands run as printed, and the CLI finds its vault's server by itself (issue 23).

Real `vault-agent serve` processes on port 0 (so nothing is at the default port), real CLI
processes run from another folder: a hint copied from the output runs unchanged, names with
spaces and quotes included, and reaches the server of the vault it came from.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from api.serverkit import build_fixture_vault

from vault_agent.config import load_settings
from vault_agent.server_address import DEFAULT_SERVER, RECORD_FILE, recorded_server, server_url

from .test_cli import ServeProcess, run_cli

ODD_NOTE = "inbox/Keeper's lens log.md"  # a space and a quote: both need quoting in a shell


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ServeProcess]]:
    """The demo vault in a folder whose name has a space, served on a free port."""
    base = tmp_path_factory.mktemp("hints")
    settings = build_fixture_vault(
        base / "my notes",
        "demo",
        extra={ODD_NOTE: "# Keeper's lens log\n\n" + "".join(f"Lens cleaning day {i}.\n" for i in range(60))},
    )
    serve = ServeProcess("--vault", str(settings.vault), "--port", "0")
    try:
        assert serve.first_line().startswith("listening on http://127.0.0.1:")
        yield settings.vault, serve
    finally:
        serve.stop()


def _hints(stdout: str) -> list[str]:
    """Every `vault-agent …` command the output suggests (in parentheses or after a colon)."""
    found = re.findall(r"\((vault-agent [^()\n]*)\)$|: (vault-agent .*)$", stdout, flags=re.M)
    return [a or b for a, b in found]


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(line)
    assert argv[0] == "vault-agent"
    return run_cli(*argv[1:], cwd=cwd)


def test_find_suggests_reads_that_run_as_printed(demo: tuple[Path, ServeProcess], tmp_path: Path) -> None:
    vault, _ = demo
    elsewhere = tmp_path  # not the vault: the hint carries --vault itself
    found = run_cli("find", "lens cleaning", "--vault", str(vault), cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    hints = _hints(found.stdout)
    assert hints, found.stdout
    assert any("'" in h for h in hints)  # a quoted path (a space or a quote in it)
    for hint in hints:
        assert hint.endswith(f"--vault {shlex.quote(str(vault))}")
        ran = _run(hint, elsewhere)
        assert (ran.returncode, ran.stderr) == (0, ""), hint
        assert ran.stdout.strip()


def test_read_and_scan_say_how_to_continue(demo: tuple[Path, ServeProcess], tmp_path: Path) -> None:
    vault, _ = demo
    read = run_cli("read", ODD_NOTE, "--start", "1", "--end", "5", "--vault", str(vault), cwd=tmp_path)
    [hint] = _hints(read.stdout)
    assert hint == shlex.join(
        ["vault-agent", "read", ODD_NOTE, "--start", "6", "--full", "--vault", str(vault)]
    )
    rest = _run(hint, tmp_path)
    assert rest.returncode == 0 and rest.stdout.startswith("Lens cleaning day 3.")
    scan = run_cli("scan", ODD_NOTE, "--chunk-lines", "10", "--vault", str(vault), cwd=tmp_path)
    [hint] = _hints(scan.stdout)
    assert hint == shlex.join(
        ["vault-agent", "scan", ODD_NOTE, "--cursor", "11", "--chunk-lines", "10", "--vault", str(vault)]
    )
    assert _run(hint, tmp_path).stdout.startswith("Lens cleaning day 8.")


def test_grep_pages_with_the_printed_cursor(demo: tuple[Path, ServeProcess], tmp_path: Path) -> None:
    vault, _ = demo
    first = run_cli("grep", "Lens cleaning day", "--limit", "50", "--vault", str(vault), cwd=tmp_path)
    last = first.stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith("-- more: add --cursor ")
    cursor = shlex.split(last.removeprefix("-- more: add "))[1]
    second = run_cli("grep", "Lens cleaning day", "--cursor", cursor, "--vault", str(vault), cwd=tmp_path)
    assert first.stdout.splitlines()[49].endswith("Lens cleaning day 49.")
    assert second.stdout.splitlines()[0].endswith("Lens cleaning day 50.")


def test_two_vaults_on_two_ports_need_no_server_flag(demo: tuple[Path, ServeProcess], tmp_path: Path) -> None:
    """The demo vault's server (module fixture) and a second vault's, both on free ports."""
    demo_vault, _ = demo
    other = build_fixture_vault(tmp_path / "other", "orientation")
    serve = ServeProcess("--vault", str(other.vault), "--port", "0")
    try:
        url = serve.first_line().removeprefix("listening on ")
        record = json.loads((other.index_dir / RECORD_FILE).read_text())
        assert (record["url"], record["host"]) == (url, "127.0.0.1")
        assert recorded_server(other.index_dir) == url != recorded_server(demo_vault / ".vault-agent")
        counts = []
        for vault in (demo_vault, other.vault):
            proc = run_cli("tags", "--limit", "200", "--vault", str(vault), "--json", cwd=tmp_path)
            assert proc.returncode == 0, proc.stderr
            counts.append({t["tag"] for t in json.loads(proc.stdout)["data"]["tags"]})
        assert "lighthouse" in counts[0] and "lighthouse" not in counts[1]  # each its own vault
    finally:
        serve.stop()
    assert not (other.index_dir / RECORD_FILE).exists()  # removed by the server that wrote it


def test_a_stale_record_is_ignored(tmp_path: Path) -> None:
    settings = load_settings({"vault": tmp_path}, env={})
    settings.index_dir.mkdir(parents=True)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(gone.stdout)  # exited: no process has this pid (until the system reuses it)
    record = settings.index_dir / RECORD_FILE
    record.write_text(
        json.dumps({"url": "http://127.0.0.1:18899", "host": "127.0.0.1", "port": 18899, "pid": dead_pid})
    )
    assert server_url(settings) == DEFAULT_SERVER
    record.write_text(
        json.dumps({"url": "http://127.0.0.1:18899", "host": "127.0.0.1", "port": 18899, "pid": os.getpid()})
    )
    assert server_url(settings) == "http://127.0.0.1:18899"
    flagged = load_settings({"vault": tmp_path, "server": "http://127.0.0.1:18898"}, env={})
    assert server_url(flagged) == "http://127.0.0.1:18898"  # --server / env / config win
    record.write_text("not json")
    assert server_url(settings) == DEFAULT_SERVER


def test_demo_script_hints_hit_its_own_server(tmp_path: Path) -> None:
    """`bash ops/demo.sh --port 0`: the commands it prints reach the server it started."""
    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    env["VAULT_AGENT_SEMANTIC"] = "off"  # no background embedding in a test
    env["VENV"] = sys.prefix  # the environment running the tests, wherever it lives (ops/venv.sh)
    proc = subprocess.Popen(
        ["bash", "ops/demo.sh", "--port", "0"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        printed = []
        while not (line := proc.stdout.readline()).startswith("listening on "):
            assert line, "demo.sh stopped before listening"
            printed.append(line)
        hints = [
            m.group(1) for ln in printed if (m := re.search(r"(\S*/bin/vault-agent .*?)(?:\s{2,}\(|$)", ln))
        ]
        assert len(hints) == 2, printed
        for hint in hints:
            argv = shlex.split(hint)
            ran = subprocess.run(
                argv + ["--json"], cwd=repo, capture_output=True, text=True, env=env, timeout=120
            )
            assert ran.returncode == 0, (hint, ran.stderr)
            assert "data" in json.loads(ran.stdout)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
