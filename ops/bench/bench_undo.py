#!/usr/bin/env python3
"""Cost of undo and of what it needs recorded: agent writes, dry run (with diffs), apply.

    nice .venv/bin/python ops/bench/bench_undo.py [--files 100] [--runs 3]

Per run, on a fresh synthetic vault of `--files` notes (2 KB each): the agent appends to
every note twice through an in-process MCP server (real SDK client), side by side with the
recording of each write keeping the bytes before and after it (what undo --merge needs) and
keeping only the bytes before (what records held before issue 20); then `undo` dry run
(per-file chain check and diff) and `--apply` (stage, swap, commit every file). Reports
per-write medians (ms), dry-run and apply wall and CPU time (ms), medians over runs, and
the load (`uptime`). No timing is asserted anywhere; this only measures.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import benchkit
from mcp import Client

from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import load_settings
from vault_agent.conversations.tools import hub_of
from vault_agent.conversations.undo import undo_conversation
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.server.context import close_context

BODY = "".join(f"line {i} of a synthetic note, long enough to look like prose.\n" for i in range(32))


def _context(base: Path, files: int) -> AppContext:
    vault = base / "vault"
    for i in range(files):
        (vault / f"n{i // 50}").mkdir(parents=True, exist_ok=True)
        (vault / f"n{i // 50}" / f"note-{i}.md").write_text(f"# Note {i}\n\n{BODY}", encoding="utf-8")
    settings = load_settings({"vault": vault, "writes_enabled": True}, env={})
    build_index(settings, full=True)
    v = vault_for_settings(settings)
    return AppContext(settings=settings, vault=v, reader=SnapshotReader(settings, v))


async def _agent_writes(ctx: AppContext, files: int, keep_after: bool) -> tuple[list[float], str]:
    server = build_mcp_server(ctx, CATALOG)
    hub_of(ctx)
    if not keep_after:  # the recording before issue 20: only the bytes before a write are kept
        observer = ctx.write_observer
        assert observer is not None

        def before_only(
            tool: str, rel: str, before: bytes | None, after: bytes | None, moved_to: str | None = None
        ) -> None:
            del after  # not kept: the point of this side
            observer(
                tool, rel, before, None, moved_to
            )  # (its record line then reads as a delete: not undone here)

        ctx.write_observer = before_only
    times = []
    async with Client(server, mode="legacy") as c:
        for round_ in range(2):
            for i in range(files):
                start = time.perf_counter()
                r = await c.call_tool(
                    "vault_write",
                    {"path": f"n{i // 50}/note-{i}.md", "content": f"agent {round_}\n", "mode": "append"},
                )
                times.append((time.perf_counter() - start) * 1000)
                assert not r.is_error, r.content
        end = await c.call_tool("end_conversation", {"title": "bench", "summary": "bench"})
    return times, str(end.structured_content["data"]["conversation"]["id"])


def main() -> None:
    parser = benchkit.parser(__doc__)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = benchkit.parse(parser, smoke={"files": 5, "runs": 1})
    rows: list[dict[str, float]] = []
    for run in range(args.runs):
        row: dict[str, float] = {}
        for keep_after in (True, False):
            base = Path(tempfile.mkdtemp(prefix="va-bench-undo-"))
            ctx = _context(base, args.files)
            try:
                times, cid = asyncio.run(_agent_writes(ctx, args.files, keep_after))
                row["write_ms_before_and_after" if keep_after else "write_ms_before_only"] = (
                    statistics.median(times)
                )
                if keep_after:
                    wall, cpu, dry = benchkit.timed(lambda: undo_conversation(ctx, cid, apply=False).data)  # noqa: B023
                    assert [f.status for f in dry.files] == ["planned"] * args.files
                    row["dry_run_ms"], row["dry_run_cpu_ms"] = wall, cpu
                    wall, cpu, done = benchkit.timed(lambda: undo_conversation(ctx, cid, apply=True).data)  # noqa: B023
                    assert [f.status for f in done.files] == ["done"] * args.files
                    row["apply_ms"], row["apply_cpu_ms"] = wall, cpu
            finally:
                close_context(ctx)
                shutil.rmtree(base, ignore_errors=True)
        rows.append(row)
        print(json.dumps({"run": run, **{k: round(v, 2) for k, v in row.items()}}))
    medians = {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
    benchkit.report({"files": args.files, "runs": args.runs, "median": medians})


if __name__ == "__main__":
    main()
