#!/usr/bin/env python3
"""Tasks query language latency at scale: a ```tasks block of 5 instructions, in process.

    nice .venv/bin/python ops/bench/bench_tasks_query.py --notes 100000 --work /tmp/bench-tasks
    .venv/bin/python ops/bench/bench_tasks_query.py --smoke

Generates ops/gen_vault.py's vault (seed 1; ~3 tasks a note) and indexes it once (reused
when present), writes one note holding the benchmark's blocks, then times
`run_tasks_query(block=…)` with one SnapshotReader (the task columns are loaded by the
first call, reported apart as `columns_ms`).
Cases: the 5-instruction dashboard of issue 30 (`not done`, a due range, a boolean line, a
sort, a limit), a text search over every task, and a grouped block. Prints, per case, the
median over --runs of each run's p50 / p99 over --requests calls, wall and CPU, with the load.
"""

from __future__ import annotations

import datetime as dt
import functools
import statistics
from pathlib import Path

import benchkit

from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.tasks.lang_api import QueryRequest, run_tasks_query

TODAY = dt.date(2026, 6, 15)
CLOCK = functools.partial(dt.datetime.combine, TODAY, dt.time(9), dt.UTC)
BLOCKS = {
    "five_instructions": "not done\ndue before next week\n(priority is above none) OR (tags include #project)\n"
    "sort by due\nlimit 50",
    "text_search": "description includes report\nsort by path\nlimit 50",
    "grouped": "not done\nhappens this month\ngroup by priority\nlimit groups 5",
}
DASHBOARD = "_bench/Tasks dashboard.md"


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=None)
    args = benchkit.parse(ap, smoke={"notes": 40, "requests": 2, "runs": 1})
    with benchkit.workdir("bench-tasks", args.work) as work:
        settings = benchkit.indexed_vault(work / f"vault-{args.notes}", args.notes)
        note = Path(settings.vault) / DASHBOARD
        if not note.exists():
            note.parent.mkdir(parents=True, exist_ok=True)
            body = "".join(f"## {name}\n\n```tasks\n{text}\n```\n\n" for name, text in BLOCKS.items())
            note.write_text(body, encoding="utf-8")
            build_index(settings, full=False)
        reader = SnapshotReader(settings, vault_for_settings(settings))
        try:
            first_ms, _, first = benchkit.timed(
                lambda: run_tasks_query(reader, QueryRequest(block=f"{DASHBOARD}#1"), clock=CLOCK)
            )
            figures: dict[str, object] = {"notes": args.notes, "columns_ms": round(first_ms, 1)}
            for index, name in enumerate(BLOCKS, start=1):
                runs = []
                for _ in range(args.runs):
                    walls, cpus = [], []
                    call = functools.partial(
                        run_tasks_query, reader, QueryRequest(block=f"{DASHBOARD}#{index}"), clock=CLOCK
                    )
                    for _ in range(args.requests):
                        wall, cpu, out = benchkit.timed(call)
                        walls.append(wall)
                        cpus.append(cpu)
                    walls.sort()
                    runs.append(
                        (walls[len(walls) // 2], walls[int(len(walls) * 0.99)], statistics.median(cpus))
                    )
                figures[name] = {
                    "p50_ms": round(statistics.median(r[0] for r in runs), 2),
                    "p99_ms": round(statistics.median(r[1] for r in runs), 2),
                    "cpu_p50_ms": round(statistics.median(r[2] for r in runs), 2),
                    "matched": out.data.matched,
                }
            figures["tasks_in_first_answer"] = len(first.data.results)
        finally:
            reader.close()
        benchkit.report(figures)


if __name__ == "__main__":
    main()
