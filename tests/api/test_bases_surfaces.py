"""vault_base answers the same on every surface: CLI = GET /bases = POST /bases = MCP (goldens).

The Bases fixture vault (fixtures/bases/vault) behind a real server; each call is made
over a query string, a JSON body, the MCP SDK client (Streamable HTTP) and the command
line, and the four bodies must be byte-identical (CLI: `--json`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import check_golden

from api.serverkit import VAULT_AGENT, ServerThread, build_fixture_vault, http_mcp_client, serving

GOLDEN = Path(__file__).parent / "golden" / "bases_surfaces.json"
CALLS: list[dict[str, Any]] = [
    {},
    {"path": "Reading.base"},
    {"path": "Reading.base", "view": "By status"},
    {"path": "Reading.base", "view": "Top 2", "limit": 1},
    {"path": "Notes/Example.md#1", "view": "Table"},
    {"path": "Notes/Projects.md"},
    {"path": "Reading.base", "view": "Backlinks of this", "this": "Books/Dune.md"},
    {"path": "Layouts.base", "view": "Map"},
    {"path": "Nope.base"},
]
_FLAGS = {"view": "--view", "this": "--this", "limit": "--limit", "cursor": "--cursor"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = build_fixture_vault(tmp_path_factory.mktemp("bases"), "bases/vault")
    with serving(settings) as thread:
        yield thread


def _get(server: ServerThread, args: dict[str, Any]) -> tuple[int, str]:
    status, _, text = server.request("GET", "/bases?" + urllib.parse.urlencode(args))
    return status, text


def _post(server: ServerThread, args: dict[str, Any]) -> tuple[int, str]:
    status, _, text = server.request("POST", "/bases", body=json.dumps(args).encode())
    return status, text


def _cli(server: ServerThread, args: dict[str, Any]) -> str:
    argv = [VAULT_AGENT, "base", *([args["path"]] if "path" in args else [])]
    for name, flag in _FLAGS.items():
        if name in args:
            argv += [flag, str(args[name])]
    vault = str(server.ctx.settings.vault)
    proc = subprocess.run(
        [*argv, "--json", "--vault", vault, "--server", server.url, "--token", server.token],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=vault,
    )
    return proc.stdout


async def _mcp(server: ServerThread, calls: list[dict[str, Any]]) -> list[Any]:
    async with http_mcp_client(server.url, server.token) as client:
        return [await client.call_tool("vault_base", args) for args in calls]


def test_every_surface_answers_the_same(server: ServerThread) -> None:
    page_two = json.loads(_post(server, CALLS[3])[1])["data"]["next_cursor"]
    calls = [*CALLS, {**CALLS[3], "cursor": page_two}]
    mcp = asyncio.run(_mcp(server, calls))
    records = []
    for args, result in zip(calls, mcp, strict=True):
        status, text = _post(server, args)
        assert _get(server, args) == (status, text), args
        assert result.content[0].text == text and result.is_error == (status >= 400), args
        assert _cli(server, args) == text + "\n", args
        records.append({"request": args, "status": status, "body": json.loads(text)})
    check_golden(GOLDEN, json.dumps(records, ensure_ascii=False, indent=1) + "\n")
    statuses = [r["status"] for r in records]
    assert statuses == [200] * 7 + [400, 404, 200]
    second = records[-1]["body"]["data"]
    assert [r["path"] for r in second["rows"]] == ["Books/Dune.md"] and "next_cursor" not in second
