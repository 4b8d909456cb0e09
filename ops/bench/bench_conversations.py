#!/usr/bin/env python3
"""Cost of recording tool calls in conversations: the same MCP calls with and without the hook.

    .venv/bin/python ops/bench/bench_conversations.py [--calls 200] [--runs 5]

One in-process MCP server (real SDK client, legacy in-memory transport) over a copy of the
orientation fixture vault; each run makes `--calls` `vault_stat` calls twice, side by side:
once with the conversation hook (one fsynced record line per call) and once with it off.
Reports the median per-call latency of each, per run, and the medians over runs, with the
machine load (`uptime`). No timing is asserted anywhere; this only measures.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import benchkit
from mcp import Client

from vault_agent.api import mcp_server
from vault_agent.api.conversation_mcp import recorded_call
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import load_settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]


async def _unrecorded(
    ctx: AppContext, name: str, arguments: dict[str, Any], context: Any, call: Callable[[], Awaitable[Any]]
) -> Any:
    """`recorded_call` with the recording off: the plain call path."""
    return await call()


async def _per_call_ms(ctx: AppContext, calls: int, record: bool) -> float:
    server = build_mcp_server(ctx, CATALOG)
    mcp_server.recorded_call = recorded_call if record else _unrecorded
    times = []
    async with Client(server, mode="legacy") as c:
        for _ in range(calls):
            start = time.perf_counter()
            await c.call_tool("vault_stat", {"path": "projects/alpha/plan.md"})
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = benchkit.parser(__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = benchkit.parse(parser, smoke={"calls": 5, "runs": 1})
    base = Path(tempfile.mkdtemp(prefix="va-bench-conv-"))
    try:
        shutil.copytree(REPO / "fixtures" / "orientation", base / "vault")
        settings = load_settings({"vault": base / "vault"}, env={})
        build_index(settings, full=True)
        vault = vault_for_settings(settings)
        ctx = AppContext(settings=settings, vault=vault, reader=SnapshotReader(settings, vault))
        on, off = [], []
        for run in range(args.runs):
            with_hook = asyncio.run(_per_call_ms(ctx, args.calls, True))
            without = asyncio.run(_per_call_ms(ctx, args.calls, False))
            on.append(with_hook)
            off.append(without)
            print(
                json.dumps(
                    {"run": run, "recorded_ms": round(with_hook, 3), "unrecorded_ms": round(without, 3)}
                )
            )
        benchkit.report({
            "calls_per_run": args.calls, "runs": args.runs,
            "median_recorded_ms": round(statistics.median(on), 3),
            "median_unrecorded_ms": round(statistics.median(off), 3),
        })  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
