"""A server-backed command, `--help` and `--version` import only what an HTTP call needs.

Each case runs the real console entry point in a fresh interpreter against a live server
and reports, at exit, which heavy packages the process imported: DuckDB, pyarrow, mcp,
aiohttp, markdown-it and the indexer belong to the server and local commands only. A
server-backed command also builds no params model: it loads neither the catalog nor the
operation modules nor the core models they import (the generated command table is enough).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from api.serverkit import ServerThread, build_fixture_vault, serving

from vault_agent.config import Settings

HEAVY = ("duckdb", "pyarrow", "mcp", "aiohttp", "markdown_it", "numpy", "vault_agent.indexer")
# What building every command from the catalog would import: pydantic models by the dozen.
CATALOG_MODULES = (
    "vault_agent.api.operation",
    "vault_agent.api.ops",
    "vault_agent.contracts",
    "vault_agent.query",
    "vault_agent.files",
    "vault_agent.conversations",
    "vault_agent.semantic",
)

# Runs the console script's entry point, then prints the heavy modules it imported, even
# when the command exits through SystemExit (typer always does).
PROBE = """
import atexit, json, sys
heavy = tuple(json.loads(sys.argv[1]))
def report():
    # Each loaded module is reported as the listed name it falls under.
    names = sorted({h for m in sys.modules for h in heavy if m == h or m.startswith(h + ".")})
    sys.stderr.write("HEAVY=" + json.dumps(names) + "\\n")
atexit.register(report)
sys.argv = ["vault-agent", *sys.argv[2:]]
from vault_agent.cli.main import run
run()
"""


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return build_fixture_vault(tmp_path_factory.mktemp("thin"))


@pytest.fixture(scope="module")
def server(settings: Settings) -> Iterator[ServerThread]:
    with serving(settings) as thread:
        yield thread


def probe(*args: str, heavy: tuple[str, ...] = HEAVY) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(heavy), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
    )
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("HEAVY="))
    return proc, json.loads(line.removeprefix("HEAVY="))


@pytest.mark.parametrize(
    "args",
    [
        ("overview",),
        ("tags", "--limit", "3"),
        ("search", "alpha"),
        ("get-note-outline", "projects/alpha/plan.md"),
        ("tree", "--json"),
    ],
)
def test_server_backed_command_imports_no_engine(
    server: ServerThread, settings: Settings, args: tuple[str, ...]
) -> None:
    # A plain command line is read without typer (cli/quick_args.py), and `Settings` is a
    # dataclass, so such a call imports no pydantic at all.
    proc, heavy = probe(
        *args,
        "--vault",
        str(settings.vault),
        "--server",
        server.url,
        heavy=(*HEAVY, *CATALOG_MODULES, "typer", "pydantic"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()  # the answer was rendered
    assert heavy == []


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("search", "--help")])
def test_help_and_version_import_no_engine(args: tuple[str, ...]) -> None:
    proc, heavy = probe(*args)
    assert proc.returncode == 0, proc.stderr
    assert heavy == []


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("search", "--help"), ("read", "--help")])
def test_help_and_version_load_no_catalog(args: tuple[str, ...]) -> None:
    proc, loaded = probe(*args, heavy=CATALOG_MODULES)
    assert proc.returncode == 0, proc.stderr
    assert loaded == []


def test_version_names_the_installed_package() -> None:
    proc, _ = probe("--version")
    assert proc.stdout.startswith("vault-agent ")


def test_a_local_command_still_loads_its_engine(tmp_path: Path) -> None:
    """The probe sees real imports: `index` must show the indexer it runs."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    proc, heavy = probe("index", "--vault", str(vault))
    assert proc.returncode == 0, proc.stderr
    assert "vault_agent.indexer" in heavy and "pyarrow" in heavy


def test_a_local_command_still_loads_the_catalog_modules(tmp_path: Path) -> None:
    """The probe sees those modules when a command needs it: `index` writes the contracts."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    proc, loaded = probe("index", "--vault", str(vault), heavy=CATALOG_MODULES)
    assert proc.returncode == 0, proc.stderr
    assert "vault_agent.contracts" in loaded


def test_the_catalog_imports_the_cores_it_binds() -> None:
    """The other side of the tests above: ops bind their cores by import (no deferred
    imports), so loading the catalog loads the cores and DuckDB. Only the generated
    command table keeps the CLI light, and the probes above would see the catalog."""
    code = (
        "import json, sys; from vault_agent.api.ops import CATALOG; "
        "print(json.dumps(sorted(m for m in ('duckdb', 'vault_agent.query.search', 'vault_agent.files.edit', "
        "'vault_agent.conversations.tools') if m in sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(proc.stdout) == [
        "duckdb",
        "vault_agent.conversations.tools",
        "vault_agent.files.edit",
        "vault_agent.query.search",
    ]
