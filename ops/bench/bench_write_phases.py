#!/usr/bin/env python3
"""Where one small write's time goes, phase by phase, in the `serve --watch` engine.

    .venv/bin/python ops/bench/bench_write_phases.py --vault V --state S [--writes 20]
        [--gap 1.2] [--seed 5]

V and S are writable copies (the bench appends to notes of V; S is an index of V, its writer
lock must be free). One in-process live writer (`build_context(watch=True)`, what `serve
--watch` runs); each write appends a unique token to a random note with wait_for_index=true,
then searches for it (the note must rank first). Timing wrappers (perf_counter wall +
thread CPU of the thread that ran the span) are put around the write path's functions from
this script only; the product logs nothing. Per phase: p50 wall ms, p50 thread-CPU ms and
how many times it ran per write; plus the process CPU (user+sys, all threads, tantivy's
native ones included) per write. Runs whatever `vault_agent` is first on sys.path.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

SPANS: dict[str, list[tuple[float, float]]] = defaultdict(list)  # name -> (wall ms, cpu ms)
_SPAN_LOCK = threading.Lock()
MARKS: dict[str, float] = {}


def _record_span(span: dict[str, Any]) -> None:
    with _SPAN_LOCK:
        SPANS[span["name"]].append(((span["e"] - span["s"]) * 1000, span["cpu"]))
        MARKS.setdefault(span["name"] + ":start", span["s"])


def instrument() -> None:
    from vault_agent.files import events, pipeline
    from vault_agent.indexer import build, search_index, segment_build, segments
    from vault_agent.query import search_engine, snapshot_catalog
    from vault_agent.query.snapshot import SnapshotReader

    spans = benchkit.Spans(_record_span)
    spans.wrap_iter(segment_build, segment_build.parse_stream, "apply: parse")
    phases: list[tuple[object, Callable[..., Any], str]] = [
        *benchkit.writer_phases(),
        (pipeline, pipeline.replace_atomic, "tool: safe write (replace_atomic)"),
        (events, events.record, "tool: event append (record)"),
        (events, events.wait, "tool: wait_for_index"),
        (segments.SegmentWriter, segments.SegmentWriter.add, "apply: segment add"),
        (search_index.SearchIndexWriter, search_index.SearchIndexWriter.delete_paths, "apply: engine delete"),
        (build, build.next_ids, "commit: next_ids"),
        (search_index, search_index._freeze_committed, "commit: engine link snapshot dir"),
        (
            search_index.SearchIndexWriter,
            search_index.SearchIndexWriter._prune_work,
            "commit: engine prune work",
        ),
        (SnapshotReader, SnapshotReader.preload, "preload: duckdb snapshot"),
        (
            snapshot_catalog.SnapshotCatalog,
            snapshot_catalog.SnapshotCatalog._load_segment,
            "preload: load segment",
        ),
        (search_engine._Preloader, search_engine._Preloader.on_publish, "preload: tantivy open"),
        (SnapshotReader, SnapshotReader._switch, "reader: switch"),
        (SnapshotReader, SnapshotReader._drain_drops, "reader: drain drops"),
    ]
    for owner, function, label in phases:
        spans.wrap(owner, function, label)


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else 0.0


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--vault", type=Path, help="required but under --smoke")
    ap.add_argument("--state", type=Path, help="required but under --smoke")
    ap.add_argument("--writes", type=int, default=20)
    ap.add_argument("--gap", type=float, default=1.2)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--settle", type=float, default=0.3, help="seconds after each write counted in its spans")
    ap.add_argument("--label", default=os.environ.get("BENCH_LABEL", ""))
    args = benchkit.parse(ap, smoke={"writes": 2, "gap": 0.2, "settle": 0.05})
    with benchkit.workdir("write-phases") as work:
        benchkit.inputs_or_smoke(ap, args, work, "vault", "state")
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    from vault_agent.api.invoke import body_of, invoke
    from vault_agent.api.ops import CATALOG
    from vault_agent.config import Settings
    from vault_agent.server.context import build_context, close_context

    instrument()
    settings = Settings(vault=args.vault, index_dir=args.state, writes_enabled=True)
    notes = sorted(
        p.relative_to(args.vault).as_posix()
        for p in args.vault.rglob("*.md")
        if ".vault-agent" not in p.parts
    )
    rng = random.Random(args.seed)

    def call(name: str, **raw: Any) -> dict[str, Any]:
        op = CATALOG.named(name)
        return body_of(op, invoke(op, ctx, raw))

    ctx = build_context(settings, watch=True)
    per_write: list[dict[str, list[tuple[float, float]]]] = []
    totals: dict[str, list[float]] = defaultdict(list)
    try:
        call("search", q="warm up query")
        time.sleep(args.gap + 1.0)
        for i in range(args.writes):
            time.sleep(max(0.0, args.gap - args.settle))  # the settle time below is part of the gap
            with _SPAN_LOCK:
                SPANS.clear()
                MARKS.clear()
            token = f"ph{os.getpid()}x{i}qz"
            path = rng.choice(notes)
            cpu0 = _cpu()
            t0 = time.perf_counter()
            body = call("write", path=path, content=f"\n{token}\n", mode="append", wait_for_index=True)
            t1 = time.perf_counter()
            found = call("search", q=token)["data"]["results"]
            t2 = time.perf_counter()
            if not body["data"]["indexed"] or not found or found[0]["path"] != path:
                raise SystemExit(f"write {i} not searchable after wait_for_index")
            totals["write (wait_for_index) ms"].append((t1 - t0) * 1000)
            totals["first search ms"].append((t2 - t1) * 1000)
            totals["write->found ms"].append((t2 - t0) * 1000)
            with _SPAN_LOCK:
                start = MARKS.get("writer: _commit (all):start")
                snap = {k: list(v) for k, v in SPANS.items()}
            if start is not None:
                totals["append->commit start ms (debounce)"].append((start - t0) * 1000)
            time.sleep(
                args.settle
            )  # let the post-commit work (maintain, semantic) land in this write's spans
            totals["process CPU ms (incl. settle)"].append((_cpu() - cpu0) * 1000)
            with _SPAN_LOCK:
                snap = {k: list(v) for k, v in SPANS.items()}
            per_write.append(snap)
    finally:
        close_context(ctx)
    names = sorted({n for w in per_write for n in w})
    phases = {}
    for n in names:
        walls = [sum(s[0] for s in w.get(n, [])) for w in per_write]
        cpus = [sum(s[1] for s in w.get(n, [])) for w in per_write]
        calls = [len(w.get(n, [])) for w in per_write]
        phases[n] = {
            "wall_p50": round(statistics.median(walls), 2),
            "cpu_p50": round(statistics.median(cpus), 2),
            "calls": round(statistics.mean(calls), 2),
        }
    summary = {k: {"p50": round(_pct(v, 0.5), 1), "p99": round(_pct(v, 0.99), 1)} for k, v in totals.items()}
    print(
        json.dumps(
            {"label": args.label, "writes": args.writes, "gap_s": args.gap, "uptime": benchkit.load_line()},
            indent=None,
        )
    )
    print(json.dumps(summary, indent=1))
    for n, row in phases.items():
        print(f"{row['wall_p50']:9.2f} {row['cpu_p50']:9.2f} {row['calls']:5.2f}  {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
