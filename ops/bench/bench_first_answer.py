#!/usr/bin/env python3
"""First answer of a fresh `vault-agent mcp`: spawn → initialize, initialize → first hybrid answer.

    nice .venv/bin/python ops/bench/bench_first_answer.py --vault V --state S \\
        [--old CHECKOUT] [--runs 5] [--query "..."] [--work DIR] [--profile]
    nice .venv/bin/python ops/bench/bench_first_answer.py --build DIR [--notes 100000] [--runs 5]

What a desktop client does: it spawns `vault-agent mcp` (stdio), runs the MCP handshake and
asks its first question. Driven by the real MCP SDK client (`mcp.Client`, legacy handshake)
against a real subprocess. S is a state dir whose snapshot is fully embedded (e.g. made by
`vault-agent index --embed --vault V --index-dir S`); every run starts from a fresh copy of
it (mtimes kept, so the writer's catch-up finds nothing to do) and a cold process.

--build DIR: the vault and state are DIR/vault-N and DIR/state-N (N = --notes), made there
once and reused by later runs (one command for a quiet machine): ops/gen_vault.py's vault
(seed 1), its lexical index, then the active model's embedding files over the real passage
rows with random unit vectors (bench_semantic_scale.fake_embed: embedding 100k notes takes
hours on 2 cores; a search's cost does not depend on the vectors' values). The query
encoder is the real model.

Side by side in one run: this checkout ("new") and, with --old, another checkout (e.g.
`git worktree add /tmp/main-ref main`), alternating, same venv, same state, children
started outside any checkout (PYTHONPATH names the side's code). Reports per side the
median of --runs of: spawn → initialize, initialize → first answer (mode hybrid, checked),
the second answer; and the load (`uptime`) at start, per run and at the end. The issue's targets:
first answer ≤ 1 s after initialize at 10k notes, ≤ 2 s at 100k.

--smoke: --build of 20 notes in a temporary folder, one side, --profile, one run (--old
only adds sides to the same loop).

--profile: also runs each side once in-process under cProfile (build the server context,
then the first hybrid search) and prints the top functions by cumulative time: where the
first answer's time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import benchkit

REPO = benchkit.REPO
RUN_CLI = "import sys; from vault_agent.cli.main import run; sys.argv[0] = 'vault-agent'; run()"

PROFILE_SCRIPT = textwrap.dedent(
    """
    import cProfile, pstats, sys, time, io
    from pathlib import Path
    vault, state, query = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    t0 = time.perf_counter()
    prof = cProfile.Profile()
    prof.enable()
    from vault_agent.config import Settings
    from vault_agent.server.context import build_context, close_context
    from vault_agent.query.search import SearchRequest, search
    t_import = time.perf_counter()
    ctx = build_context(Settings(vault=vault, index_dir=state), watch=True, follow_if_busy=True)
    t_ctx = time.perf_counter()
    out = search(ctx.reader, SearchRequest(query, mode="hybrid"))
    t_first = time.perf_counter()
    prof.disable()
    close_context(ctx)
    print(f"imports {t_import - t0:.2f} s, context (writer catch-up) {t_ctx - t_import:.2f} s, "
          f"first hybrid search {t_first - t_ctx:.2f} s (mode {out.data.mode})")
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
    print(buf.getvalue())
    """
)


async def one_run(checkout: Path, vault: Path, state: Path, work: Path, query: str) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", RUN_CLI, "mcp", "--vault", str(vault), "--index-dir", str(state)],
        env={"PYTHONPATH": str(checkout), "VAULT_AGENT_LOG_LEVEL": "WARNING"},
        cwd=str(work),
    )
    with (work / "stderr.txt").open("a") as errlog:
        t0 = time.perf_counter()
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:  # type: ignore[arg-type]
            t_init = time.perf_counter()
            first = await client.call_tool("search", {"query": query, "mode": "hybrid"})
            t_first = time.perf_counter()
            await client.call_tool("search", {"query": query + " notes", "mode": "hybrid"})
            t_second = time.perf_counter()
    body = first.structured_content or {}
    return {
        "spawn_to_initialize_s": round(t_init - t0, 3),
        "initialize_to_first_answer_s": round(t_first - t_init, 3),
        "second_answer_s": round(t_second - t_first, 3),
        "mode": body.get("data", {}).get("mode"),
        "warnings": [w["code"] for w in body.get("warnings", [])],
    }


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--vault", type=Path, help="the vault (required unless --smoke)")
    ap.add_argument(
        "--state", type=Path, help="an embedded state dir, copied per run (required unless --smoke)"
    )
    ap.add_argument("--old", type=Path, default=None, help="another checkout to run side by side")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--query", default="how do we plan the release review")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--build", type=Path, default=None, help="make (once) and use DIR/vault-N, DIR/state-N")
    ap.add_argument("--notes", type=int, default=100_000, help="N for --build")
    args = benchkit.parse(ap, smoke={"runs": 1, "profile": True}, argv=argv)
    with benchkit.workdir("bench-first-answer", keep=args.work) as work:
        if args.smoke:  # the --build path on 20 notes
            args.build, args.notes = work, 20
        if args.build is not None:
            args.vault, args.state = _built(args.build, args.notes)
        elif args.vault is None or args.state is None:
            ap.error("required: --vault and --state, or --build DIR (or --smoke)")
        return _measure(args, work)


def _built(root: Path, notes: int) -> tuple[Path, Path]:
    """DIR/vault-N and DIR/state-N, made when missing (see the module doc)."""
    import bench_semantic_scale

    from vault_agent.freshness import read_current_manifest
    from vault_agent.semantic.encoder import active_model
    from vault_agent.semantic.store import TABLE

    vault, state = root / f"vault-{notes}", root / f"state-{notes}"
    t0 = time.perf_counter()
    settings = benchkit.indexed_vault(vault, notes, index_dir=state)
    manifest = read_current_manifest(settings.index_dir)
    if manifest is not None and not all(TABLE in s.files for s in manifest.segments):
        made = bench_semantic_scale.fake_embed(state, vault)
        print(json.dumps({"built": str(root), "model": active_model().model_id, **made,
                          "seconds": round(time.perf_counter() - t0, 1)}), flush=True)  # fmt: skip
    return vault, state


def _measure(args: argparse.Namespace, work: Path) -> int:
    sides = {"new": REPO} | ({"old": args.old.resolve()} if args.old else {})
    print(json.dumps({"load_start": benchkit.load_line(), "sides": {k: str(v) for k, v in sides.items()}}))
    if args.profile:
        for side, checkout in sides.items():
            state = work / f"state-{side}-profile"
            shutil.rmtree(state, ignore_errors=True)
            shutil.copytree(args.state, state)
            print(f"== {side}: in-process profile")
            subprocess.run(
                [sys.executable, "-c", PROFILE_SCRIPT, str(args.vault), str(state), args.query],
                env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"},
                cwd=work,
                check=True,
            )
            shutil.rmtree(state, ignore_errors=True)
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for i in range(args.runs):
        for side, checkout in sides.items():
            state = work / f"state-{side}"
            shutil.rmtree(state, ignore_errors=True)
            shutil.copytree(args.state, state)
            subprocess.run(["sync"], check=False)
            row = asyncio.run(one_run(checkout, args.vault, state, work, args.query))
            row |= {"side": side, "run": i + 1, "load": benchkit.load_line()}
            results[side].append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(state, ignore_errors=True)
    summary: dict[str, Any] = {"runs": args.runs}
    for side, rows in results.items():
        summary[side] = {
            key: round(statistics.median(r[key] for r in rows), 3)
            for key in ("spawn_to_initialize_s", "initialize_to_first_answer_s", "second_answer_s")
        } | {"modes": sorted({str(r["mode"]) for r in rows})}
    if "old" in summary:
        for key in ("spawn_to_initialize_s", "initialize_to_first_answer_s"):
            summary[f"{key}_new_over_old"] = round(summary["new"][key] / max(summary["old"][key], 1e-6), 2)
    benchkit.report({"summary": summary})  # the end's load
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
