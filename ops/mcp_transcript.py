#!/usr/bin/env python3
"""Print what the real MCP SDK client sees, on both protocol revisions and both transports.

    .venv/bin/python ops/mcp_transcript.py [--allow-writes] [--profile agent-files]

Copies the synthetic `fixtures/orientation` vault into a temp dir, indexes it, then for
each transport (stdio: `vault-agent mcp --no-watch`; Streamable HTTP: `/mcp` of an
in-process server) and each revision (`legacy` = 2025 initialize handshake, `auto` =
`server/discover` → stateless 2026-07-28) prints: the negotiated version, the server, the
size of `tools/list`, one call, one error and the progress of a long call. Nothing is
written outside the temp dir; every process it starts is stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from vault_agent.config import Settings, load_settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.server.context import build_context, close_context  # noqa: E402
from vault_agent.server.http_server import start_server  # noqa: E402

VAULT_AGENT = str(Path(sys.executable).parent / "vault-agent")


def _text(result: Any) -> str:
    block = result.content[0]
    return str(getattr(block, "text", block))


async def session(label: str, client: Client) -> None:
    notes: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append(f"{progress:g}/{total if total is not None else '?'} {message}")

    async with client:
        listed = await client.list_tools()
        size = len(listed.model_dump_json(by_alias=True, exclude_none=True))
        print(f"== {label}")
        print(
            f"   protocol {client.protocol_version}, server {client.server_info and client.server_info.name}"
        )
        print(f"   instructions: {(client.instructions or '')[:90]}…")
        print(f"   tools/list: {len(listed.tools)} tools, {size} characters")
        ok = await client.call_tool("vault_tags", {"limit": 3})
        print(f"   vault_tags {{limit: 3}} → isError={ok.is_error} {_text(ok)}")
        bad = await client.call_tool("get_note_outline", {"path": "projects/alpha/nope.md"})
        print(f"   get_note_outline nope.md → isError={bad.is_error} {_text(bad)}")
        found = await client.call_tool("vault_find", {"query": "alpha"}, progress_callback=on_progress)
        actions = found.structured_content["data"]["next_actions"] if not found.is_error else []
        print(f"   vault_find alpha → next_actions {[a['type'] for a in actions]}; progress {notes}")


def fixture_settings(tmp: Path) -> Settings:
    vault = tmp / "vault"
    shutil.copytree(ROOT / "fixtures" / "orientation", vault)
    settings = load_settings({"vault": vault}, env={})
    build_index(settings, full=True)
    return settings


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = dataclasses.replace(
            fixture_settings(Path(tmp)), writes_enabled=args.allow_writes, tool_profile=args.profile
        )
        extra = (["--allow-writes"] if args.allow_writes else []) + ["--tool-profile", args.profile]
        for mode in ("legacy", "auto"):
            params = StdioServerParameters(
                command=VAULT_AGENT,
                args=["mcp", "--vault", str(settings.vault), "--no-watch", *extra],
                env={"VAULT_AGENT_LOG_LEVEL": "WARNING"},
                cwd=str(settings.vault),
            )
            await session(f"stdio, mode={mode}", Client(params, mode=mode))
        ctx = build_context(settings, watch=False)
        server = await start_server(ctx, "127.0.0.1", 0)
        try:
            for mode in ("legacy", "auto"):
                headers = {"Authorization": f"Bearer {server.policy.token}"}
                async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                    transport: Any = streamable_http_client(server.url + "/mcp", http_client=http)
                    await session(f"Streamable HTTP, mode={mode}", Client(transport, mode=mode))
        finally:
            await server.stop()
            close_context(ctx)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allow-writes", action="store_true")
    parser.add_argument("--profile", default="default", choices=["default", "agent-files"])
    asyncio.run(main(parser.parse_args()))
