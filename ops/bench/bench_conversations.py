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

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mcp import Client  # noqa: E402

from vault_agent.api.mcp_server import build_mcp_server  # noqa: E402
from vault_agent.api.registry import AppContext, make_vault  # noqa: E402
from vault_agent.config import load_settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402


async def _per_call_ms(ctx: AppContext, calls: int, record: bool) -> float:
    server = build_mcp_server(ctx)
    if not record:
        server._app_ctx = None  # type: ignore[attr-defined]  # the hook off: plain SDK call path
    times = []
    async with Client(server, mode="legacy") as c:
        for _ in range(calls):
            start = time.perf_counter()
            await c.call_tool("vault_stat", {"path": "projects/alpha/plan.md"})
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="va-bench-conv-"))
    try:
        shutil.copytree(REPO / "fixtures" / "orientation", base / "vault")
        settings = load_settings({"vault": base / "vault"}, env={})
        build_index(settings, full=True)
        vault = make_vault(settings)
        ctx = AppContext(settings=settings, vault=vault, reader=SnapshotReader(settings, vault))
        on, off = [], []
        for run in range(args.runs):
            with_hook = asyncio.run(_per_call_ms(ctx, args.calls, True))
            without = asyncio.run(_per_call_ms(ctx, args.calls, False))
            on.append(with_hook)
            off.append(without)
            print(json.dumps({"run": run, "recorded_ms": round(with_hook, 3), "unrecorded_ms": round(without, 3)}))
        load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        print(json.dumps({
            "calls_per_run": args.calls, "runs": args.runs,
            "median_recorded_ms": round(statistics.median(on), 3),
            "median_unrecorded_ms": round(statistics.median(off), 3),
            "uptime": load,
        }))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
