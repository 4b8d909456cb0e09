"""SEMANTIC_OFF and SEMANTIC_PENDING on every search answer: each mode (default included),
each surface (HTTP, MCP over HTTP and stdio, CLI --json), the same warning, kept as golden.

OFF: a lexical index (`vault-agent index`) served by a server that computes nothing.
PENDING: a real writer whose worker is held between two batches (its first batch
published), so the share is exact; the ETA, which depends on the machine, is left out.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

from api.serverkit import VAULT_AGENT, ServerThread, http_mcp_client, serving, stdio_mcp_client
from testkit import check_golden

from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer

from .conftest import copy_vault, settings_for, wait_until
from .test_progress import _committed, bulk_vault, small_batches

GOLDEN = Path(__file__).parent / "golden"
MODES: list[str | None] = [None, "lexical", "semantic", "hybrid"]
QUERY = "harbor review"


def _args(mode: str | None) -> dict[str, Any]:
    return {"query": QUERY} | ({"mode": mode} if mode else {})


async def _mcp(client_cm: Any) -> list[Any]:
    async with client_cm as client:
        out = []
        for mode in MODES:
            result = await client.call_tool("search", _args(mode))
            out.append(result.structured_content["warnings"])
        return out


def _warnings_everywhere(server: ServerThread) -> dict[str, list[dict[str, Any]]]:
    """mode → warnings, after checking every surface answered the same ones."""
    settings = server.ctx.settings
    by_surface: dict[str, list[Any]] = {"http": [], "cli": []}
    for mode in MODES:
        query = f"/search?q={QUERY.replace(' ', '+')}" + (f"&mode={mode}" if mode else "")
        by_surface["http"].append(server.get_json(query)[2]["warnings"])
        cli = [VAULT_AGENT, "search", QUERY, "--json", "--server", server.url, "--token", server.token]
        proc = subprocess.run(
            cli + (["--mode", mode] if mode else []), capture_output=True, text=True, timeout=120, check=True
        )
        by_surface["cli"].append(json.loads(proc.stdout)["warnings"])
    by_surface["mcp-http"] = asyncio.run(_mcp(http_mcp_client(server.url, server.token)))
    by_surface["mcp-stdio"] = asyncio.run(_mcp(stdio_mcp_client(settings, "--no-watch")))
    masked = {surface: _mask(found) for surface, found in by_surface.items()}
    for surface, found in masked.items():
        assert found == masked["http"], surface
    return {str(mode or "default"): w for mode, w in zip(MODES, masked["http"], strict=True)}


def _mask(value: Any) -> Any:
    """The ETA depends on the machine and the moment (and is left out while the rate is
    unknown): dropped, the rest must be equal."""
    return json.loads(re.sub(r", about [^;\"]+ left", "", json.dumps(value)))


def _golden(name: str, table: dict[str, Any]) -> None:
    check_golden(GOLDEN / name, json.dumps(table, ensure_ascii=False, indent=2) + "\n")


def test_off_on_every_surface_and_mode_where_nothing_computes_them(tmp_path: Path) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)
    with serving(settings) as server:  # a plain `serve`: no writer, no embedder
        table = _warnings_everywhere(server)
    assert {w[0]["code"] for w in table.values()} == {"SEMANTIC_OFF"}
    _golden("warnings-off.json", table)


def test_pending_on_every_surface_and_mode_while_a_writer_computes_them(tmp_path: Path) -> None:
    settings = bulk_vault(tmp_path)
    build_index(settings, full=True)
    held, release = threading.Event(), threading.Event()
    first: dict[str, str] = {}

    def hold_after_first_batch(segment_id: int, files: dict[str, str]) -> None:
        if not held.is_set():
            first.update(files)
            held.set()
            release.wait(120)

    writer = small_batches(Writer(settings, watch=False))
    writer._semantic.after_job = hold_after_first_batch
    with writer:
        try:
            assert wait_until(held.is_set)
            assert wait_until(lambda: _committed(settings, first))
            with serving(settings) as server:  # another reader of the same state dir
                table = _warnings_everywhere(server)
        finally:
            release.set()
    assert {w[0]["code"] for w in table.values() if w} == {"SEMANTIC_PENDING"}, table
    assert all("(40 of 240)" in w[0]["message"] for w in table.values())
    _golden("warnings-pending.json", table)
