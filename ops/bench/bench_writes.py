#!/usr/bin/env python3
"""Write-tool benchmark on a generated vault: write→searchable latency and 8-writer throughput.

    .venv/bin/python ops/bench/bench_writes.py [--notes 10000] [--writes 60] [--writers 8]
        [--per-writer 15] [--runs 3] [--gap 0] [--workdir DIR]

Setup: `ops/gen_vault.py` (deterministic) into a temp dir, a full index, then one in-process
live writer (`build_context(watch=True)`, the same engine `serve --watch` runs).
1. latency: one writer appends a unique token to a random note with wait_for_index=true,
   then `search` for the token: `committed` = ms until the write call returned (the snapshot
   holding it committed: searchable), `found` = ms until `search` returned the note
   (includes the query layer loading the new snapshot); p50/p99;
2. throughput: N threads each do M appends with wait_for_index=true (every write is
   searchable when its call returns); writes/s = all writes / wall time. The engine batches
   concurrent writes into one commit; the count of snapshots committed is reported.
Medians over --runs. Prints one JSON line per run and a summary line.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import benchkit

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.server.context import build_context, close_context

REPO = Path(__file__).resolve().parents[2]


def _call(ctx: AppContext, name: str, **raw: Any) -> dict[str, Any]:
    op = CATALOG.named(name)
    return body_of(op, invoke(op, ctx, raw))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def latency(
    ctx: AppContext, notes: list[str], writes: int, rng: random.Random, tag: str, gap_s: float = 0.0
) -> tuple[list[float], list[float]]:
    """(ms until the write call with wait_for_index returned, ms until search found it)."""
    committed: list[float] = []
    found_at: list[float] = []
    for i in range(writes):
        time.sleep(gap_s)  # an agent thinking between writes (0: back to back)
        token = f"lat{tag}x{i}qz"
        path = rng.choice(notes)
        start = time.perf_counter()
        body = _call(ctx, "write", path=path, content=f"\n{token}\n", mode="append", wait_for_index=True)
        mid = time.perf_counter()
        found = _call(ctx, "search", q=token)["data"]["results"]
        end = time.perf_counter()
        # Hybrid search (the default once embeddings exist) also lists semantic neighbours,
        # so the written note must rank first, not be the only result.
        if not body["data"]["indexed"] or not found or found[0]["path"] != path:
            raise SystemExit(f"write {i} not searchable after wait_for_index")
        committed.append((mid - start) * 1000)
        found_at.append((end - start) * 1000)
    return committed, found_at


def throughput(ctx: AppContext, notes: list[str], writers: int, per_writer: int, tag: str) -> dict[str, Any]:
    errors: list[BaseException] = []
    snapshots: set[int] = set()
    lock = threading.Lock()

    def run(w: int) -> None:
        rng = random.Random(w)
        try:
            for i in range(per_writer):
                body = _call(
                    ctx,
                    "write",
                    path=rng.choice(notes),
                    content=f"\nthr{tag}w{w}i{i}\n",
                    mode="append",
                    wait_for_index=True,
                )
                with lock:
                    snapshots.add(body["data"]["snapshot_id"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if errors:
        raise errors[0]
    total = writers * per_writer
    return {
        "writes": total,
        "seconds": round(wall, 3),
        "writes_per_s": round(total / wall, 1),
        "commits": len(snapshots),
    }


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--writes", type=int, default=60)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--per-writer", type=int, default=15)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gap", type=float, default=0.0, help="seconds between latency writes (0: back to back)")
    ap.add_argument("--workdir", type=Path, default=None)
    args = benchkit.parse(
        ap, smoke={"notes": 30, "writes": 3, "writers": 2, "per_writer": 2, "runs": 1}, argv=argv
    )
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-writes-"))
    vault = work / "vault"
    benchkit.generated_vault(vault, args.notes)
    settings = Settings(vault=vault, index_dir=work / "state", writes_enabled=True)
    t0 = time.perf_counter()
    build_index(settings, full=True)
    print(json.dumps({"setup": "index", "notes": args.notes, "seconds": round(time.perf_counter() - t0, 1)}))
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    ctx = build_context(settings, watch=True)
    runs: list[dict[str, float]] = []
    try:
        for run in range(args.runs):
            rng = random.Random(run)
            committed, found = latency(ctx, notes, args.writes, rng, f"r{run}", args.gap)
            res = throughput(ctx, notes, args.writers, args.per_writer, f"r{run}")
            row = {
                "committed_p50": _pct(committed, 0.5),
                "committed_p99": _pct(committed, 0.99),
                "found_p50": _pct(found, 0.5),
                "found_p99": _pct(found, 0.99),
                "writes_per_s": res["writes_per_s"],
            }
            runs.append(row)
            print(json.dumps({"run": run, **{k: round(v, 1) for k, v in row.items()}, "throughput": res}))
    finally:
        close_context(ctx)
    summary: dict[str, Any] = {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}
    summary.update(notes=args.notes, writers=args.writers, runs=args.runs)
    print(json.dumps({"summary": summary}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
