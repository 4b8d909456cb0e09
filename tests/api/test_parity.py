"""Parity over the real catalog: HTTP body == MCP structuredContent == CLI --json.

MCP runs over HTTP and stdio, each on both protocol revisions (2025 handshake, 2026-07-28);
the SDK client also checks every structuredContent against the tool's outputSchema.

Every read operation of the catalog whose required parameters have a sample value runs on the
orientation fixture vault. Bodies are compared as text: the MCP text block and the CLI
output must be the HTTP body byte for byte. The HTTP bodies are also kept as golden files
(`tests/api/golden/`; regenerate with pytest --update-golden).
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
from testkit import check_golden, wait_until

from api.serverkit import (
    VAULT_AGENT,
    ServerThread,
    build_fixture_vault,
    http_mcp_client,
    serving,
    stdio_mcp_client,
)
from vault_agent.api.invoke import dump_json
from vault_agent.api.operation import Operation
from vault_agent.api.ops import CATALOG
from vault_agent.cli.command_table import COMMANDS  # the commands that call the server
from vault_agent.config import Settings

GOLDEN = Path(__file__).parent / "golden"
# A sample value for each required parameter name an operation may declare.
SAMPLES: dict[str, Any] = {
    "path": "projects/alpha/plan.md",
    "query": "alpha",
    "q": "alpha",
    "pattern": "alpha",
    "glob": "**/*.md",
}
KNOWN = {
    "status", "overview", "tree", "tags", "facets",
    "get-note-outline", "get-document-tree", "get-section-source", "get-metadata-facets",
}  # fmt: skip
# Conversation operations answer per session (ids, times, the caller's own record): their
# surfaces are compared in tests/conversations instead.
PER_SESSION = {"end-conversation", "get-conversation", "send-message"}


def runnable() -> list[tuple[Operation, dict[str, Any]]]:
    """Read operations with an HTTP route whose required parameters all have samples."""
    out = []
    for op in CATALOG.of_kind("read"):
        required = [n for n, f in op.params.model_fields.items() if f.is_required()]
        if (
            op.mcp_only
            or not op.agent_tool
            or op.name in PER_SESSION
            or any(n not in SAMPLES for n in required)
        ):
            continue
        out.append((op, {n: SAMPLES[n] for n in required}))
    return out


@pytest.fixture(scope="module")
def parity_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = build_fixture_vault(tmp_path_factory.mktemp("parity"))
    with serving(settings, pinned=None) as thread:
        wait_until(
            lambda: thread.get_json("/status")[2]["data"]["indexFreshness"] == "fresh", what="fresh index"
        )
        yield thread


def _http_text(server: ServerThread, op: Operation, args: dict[str, Any]) -> tuple[int, str]:
    if op.http_method == "GET":
        status, _, text = server.request("GET", op.http_path + "?" + urllib.parse.urlencode(args))
    else:
        status, _, text = server.request("POST", op.http_path, body=json.dumps(args).encode())
    return status, text


def _cli_args(op: Operation, args: dict[str, Any]) -> list[str] | None:
    argv = [op.name]
    for name in op.cli_args:
        if name in args:
            argv.append(str(args[name]))
    for name in args:
        if name not in op.cli_args:
            flag = next((o.flag for o in op.cli_options if o.target == name), None)
            if flag is None and op.cli_options:
                return None
            argv += [flag or "--" + name.replace("_", "-"), str(args[name])]
    return argv


async def _mcp_texts(client_cm: Any, calls: list[tuple[str, dict[str, Any]]], wait_fresh: bool) -> list[Any]:
    async with client_cm as client:
        if wait_fresh:
            for _ in range(600):
                status = await client.call_tool("vault_status", {})
                if status.structured_content["data"]["indexFreshness"] == "fresh":
                    break
                await asyncio.sleep(0.05)
        return [await client.call_tool(name, args) for name, args in calls]


def test_every_known_operation_is_covered() -> None:
    names = {op.name for op, _ in runnable()}
    in_catalog = {op.name for op in CATALOG}
    assert KNOWN & in_catalog <= names


def test_http_mcp_cli_bodies_are_identical(parity_server: ServerThread) -> None:
    cases = runnable()
    http = {op.name: _http_text(parity_server, op, args) for op, args in cases}
    calls = [(op.mcp_name, args) for op, args in cases]
    settings = parity_server.ctx.settings
    # Both protocol revisions: the 2025 handshake (legacy) and stateless 2026-07-28 (auto).
    results: dict[str, list[Any]] = {}
    for mode in ("legacy", "auto"):
        url, token = parity_server.url, parity_server.token
        results[f"mcp-http-{mode}"] = asyncio.run(_mcp_texts(http_mcp_client(url, token, mode), calls, False))
        stdio = stdio_mcp_client(settings, "--no-watch", mode=mode)
        results[f"mcp-stdio-{mode}"] = asyncio.run(_mcp_texts(stdio, calls, True))
    mismatches = []
    for i, (op, args) in enumerate(cases):
        status, text = http[op.name]
        body = json.loads(text)
        for label, per_case in results.items():
            result = per_case[i]
            if _same_error_in_cli_words(result.content[0].text, body):
                continue  # a parameter error, in MCP's argument names
            if result.is_error != (status >= 400) or result.content[0].text != text:
                mismatches.append((op.name, label, result.content[0].text[:200], text[:200]))
            elif result.structured_content != body or dump_json(result.structured_content) != text:
                mismatches.append((op.name, label, "structuredContent", ""))
        argv = _cli_args(op, args)
        if argv is not None:
            # Generated commands go through the server; local ones (status) read the state dir.
            remote = (
                ["--server", parity_server.url, "--token", parity_server.token] if op.name in COMMANDS else []
            )
            proc = subprocess.run(
                [VAULT_AGENT, *argv, "--json", "--vault", str(settings.vault), *remote],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=str(settings.vault),
            )
            if proc.stdout != text + "\n" and not _same_error_in_cli_words(proc.stdout, body):
                mismatches.append((op.name, "cli", proc.stdout[:200], proc.stderr[-300:]))
        _check_golden(op.name, args, status, body)
    assert mismatches == []


def _same_error_in_cli_words(stdout: str, body: Any) -> bool:
    """A parameter error names the parameter the way of the surface called: CLI flags, MCP
    argument names (`section_id`), HTTP query names (`sectionId`) (issue 23, checked word for
    word by test_param_table.py): same code, other words."""
    codes = ("INVALID_PARAMETER", "INVALID_LIMIT")
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") not in codes:
        return False
    got = json.loads(stdout).get("error", {})
    return bool(got.get("code") == error["code"] and got.get("message"))


VOLATILE = ("lastCommitAt", "created", "modified", "mtime")  # differ per build; masked in golden files


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<volatile>" if k in VOLATILE else _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _check_golden(name: str, args: dict[str, Any], status: int, body: Any) -> None:
    record = {"request": args, "status": status, "body": _mask(body)}
    check_golden(GOLDEN / f"{name}.json", json.dumps(record, ensure_ascii=False, indent=2) + "\n")


def test_settings_have_no_absolute_paths_in_bodies(parity_server: ServerThread) -> None:
    settings: Settings = parity_server.ctx.settings
    for op, args in runnable():
        _, text = _http_text(parity_server, op, args)
        assert str(settings.vault) not in text and str(Path(settings.vault).resolve()) not in text
