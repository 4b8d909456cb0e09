#!/usr/bin/env python3
"""vault_tasks and DQL TASK latency at scale, in process, and the memory of the task columns.

    nice .venv/bin/python ops/bench/bench_tasks.py --notes 100000 --work /tmp/bench-tasks
    .venv/bin/python ops/bench/bench_tasks.py --smoke

Generates the vault with ops/gen_vault.py (seed 1: ~3 tasks a note) and indexes it once (both
kept in --work when given). One SnapshotReader; a vault_query first loads the notes' columns
that tasks share with vault_query and Bases (`shared_note_columns_mb`); the first task request
then loads every segment's task columns (reported apart: `load_ms`, and the process's RSS
growth over it after gc and malloc_trim, `columns_mb`: what tasks alone add to serve; and
`columns_after_cases_mb`, the same growth once every case below has run: what requests leave).
Then per case, p50/p99 wall and p50 CPU over --requests calls, median over --runs: the issue's
"not done, due before today, sort due" (`overdue`), a tag, a folder with a text search, the
default order of every task (a page of 50), a custom status and priority, and DQL TASK.
Prints one JSON line with the load.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import gc
import resource
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.filters import Filters
from vault_agent.query.structured.run import QueryRequest, vault_query
from vault_agent.query.tasks.filters import TaskFilters
from vault_agent.query.tasks.run import TasksRequest, vault_tasks

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)  # gen_vault's dates straddle it


def clock() -> dt.datetime:
    return NOW


CASES: dict[str, TaskFilters] = {
    "overdue": TaskFilters(status=("open",), due="before today", sort="due"),
    "tag": TaskFilters(tags=("project",), status=("open",)),
    "folder_text": TaskFilters(folder="projects", text="report"),
    "all_default_order": TaskFilters(),
    "status_priority": TaskFilters(status=("in_progress", "?"), priority=("above medium",)),
}
DQL = "TASK WHERE !completed AND due < date(today) SORT due"


def trimmed_rss_mb() -> float:
    """RSS after a collection and malloc_trim: what this process holds, not freed pages."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_mb()


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _tasks_call(reader: SnapshotReader, filters: TaskFilters) -> Callable[[], Any]:
    return lambda: vault_tasks(reader, TasksRequest(filters), clock)


def _measure_case(call: Callable[[], Any], requests: int) -> dict[str, float]:
    walls, cpus = [], []
    for _ in range(requests):
        wall, cpu, _ = benchkit.timed(call)
        walls.append(wall)
        cpus.append(cpu)
    walls.sort()
    return {
        "p50_ms": statistics.median(walls),
        "p99_ms": walls[min(len(walls) - 1, int(len(walls) * 0.99))],
        "cpu_p50_ms": statistics.median(cpus),
    }


def _measure(args: Any) -> None:
    with benchkit.workdir("bench-tasks", args.work) as work:
        settings = benchkit.indexed_vault(work / f"vault-{args.notes}", args.notes)
        reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
        try:
            # The notes' orientation columns (shared with vault_query and Bases, loaded by
            # whichever comes first) are loaded by a vault_query before, so `columns_mb` is
            # what the task columns alone add; freed memory is returned first (trimmed_rss_mb).
            base = trimmed_rss_mb()
            vault_query(reader, QueryRequest(filters=Filters(tags=("none-such",))), clock=clock)
            before = trimmed_rss_mb()
            load_ms, _, first = benchkit.timed(
                lambda: vault_tasks(reader, TasksRequest(TaskFilters()), clock)
            )
            after = trimmed_rss_mb()
            calls: dict[str, Callable[[], Any]] = {name: _tasks_call(reader, f) for name, f in CASES.items()}
            calls["dql_task"] = lambda: vault_query(
                reader, QueryRequest(filters=Filters(), dql=DQL), clock=clock
            )
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in calls}
            for _ in range(args.runs):
                for name, call in calls.items():
                    runs[name].append(_measure_case(call, args.requests))
            after_cases = trimmed_rss_mb()
            figures: dict[str, Any] = {
                "notes": args.notes,
                "tasks": first.data.total,
                "load_ms": round(load_ms, 1),
                "rss_snapshot_mb": round(base, 1),
                "shared_note_columns_mb": round(before - base, 1),
                "rss_before_tasks_mb": round(before, 1),
                "rss_with_tasks_mb": round(after, 1),
                "columns_mb": round(after - before, 1),
                "columns_after_cases_mb": round(after_cases - before, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
            for name, samples in runs.items():
                figures[name] = {k: round(statistics.median(s[k] for s in samples), 2) for k in samples[0]}
        finally:
            reader.close()
    benchkit.report(figures)


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--work", type=Path, default=None, help="keep the vault and index here")
    args = benchkit.parse(ap, smoke={"notes": 30, "runs": 1, "requests": 2})
    _measure(args)


if __name__ == "__main__":
    main()
