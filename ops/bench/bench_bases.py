#!/usr/bin/env python3
"""vault_base at scale: one saved view over a generated vault, in process; parse of a 200-line base.

    nice .venv/bin/python ops/bench/bench_bases.py --notes 100000 --runs 3 --work /tmp/bench-bases

Generates the vault with ops/gen_vault.py (seed 1: typed properties `priority`, `done`,
`due`, tags) and indexes it once (reused when present), then writes `Bench.base` and lets
the index catch up. The view (issue 31's): a tag filter (the vault's most common nested
tag), two property comparisons (`priority >= 3`, `status != "archived"`), one formula
column, a sort on `due` (descending) and `limit: 50`. Per run: the first call (the
snapshot's columns built), then p50/p99 wall and p50 CPU over --requests calls through
`vault_base` with one SnapshotReader and its cache, as `serve` answers; the listing of the
vault's bases (`vault_base()`: the first scans the chunk text for ```base blocks, once per
segment), first and p50 of 5. Also the parse
and check of a generated 200-line `.base` (13 views; `parse_base`: YAML and structure, then
`compile_view`: the expressions of the first view, and of all), median CPU ms. Prints the medians over --runs with the load.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import benchkit

from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.bases.base_file import parse_base
from vault_agent.query.bases.models import BaseRequest
from vault_agent.query.bases.run import vault_base
from vault_agent.query.bases.views import compile_view
from vault_agent.query.snapshot import SnapshotReader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bases_expr import base_text  # noqa: E402 - the 200-line base of the expression bench

VIEW = """\
filters:
  and:
    - file.hasTag("{tag}")
formulas:
  score: '(priority * 2 + if(done, 1, 0)).round(1)'
properties:
  formula.score:
    displayName: Score
views:
  - type: table
    name: Bench
    filters:
      and:
        - priority >= 3
        - 'status != "archived"'
    order: [file.name, priority, status, due, formula.score]
    sort:
      - property: due
        direction: DESC
    limit: 50
"""


def common_tag(reader: SnapshotReader) -> str:
    with reader.acquire() as view:
        row = view.con.execute(
            "SELECT tag, count(*) c FROM tags WHERE tag LIKE '%/%' GROUP BY tag ORDER BY c DESC, tag LIMIT 1"
        ).fetchone()
    return str(row[0]) if row else "project"


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def one_run(reader: SnapshotReader, requests: int) -> dict[str, Any]:
    cache: dict[Any, Any] = {}
    request = BaseRequest(path="Bench.base", view="Bench")
    first, _, out = benchkit.timed(lambda: vault_base(reader, request, cache=cache))
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(requests):
        wall, cpu, out = benchkit.timed(lambda: vault_base(reader, request, cache=cache))
        walls.append(wall)
        cpus.append(cpu)
    listing = BaseRequest()
    list_first, _, _ = benchkit.timed(lambda: vault_base(reader, listing, cache=cache))
    list_walls = [benchkit.timed(lambda: vault_base(reader, listing, cache=cache))[0] for _ in range(5)]
    return {
        "list_first_ms": list_first,
        "list_p50_ms": statistics.median(list_walls),
        "first_ms": first,
        "p50_ms": statistics.median(walls),
        "p99_ms": pct(walls, 0.99),
        "cpu_p50_ms": statistics.median(cpus),
        "rows": out.data.total,
    }


def parse_ms(lines: int, repeat: int) -> tuple[float, float]:
    """Median CPU ms of (reading the base and checking its first view, checking all views)."""
    text = base_text(lines)
    one, every = [], []
    for i in range(repeat):
        t0 = time.process_time()
        spec = parse_base(text + f"# {i}\n", "Generated.base")  # a new text: nothing cached
        compile_view(spec, spec.views[0])
        t1 = time.process_time()
        for view in spec.views[1:]:
            compile_view(spec, view)
        one.append((t1 - t0) * 1000)
        every.append((time.process_time() - t0) * 1000)
    return statistics.median(one), statistics.median(every)


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--work", type=Path, default=None, help="keep the vault and index here (reused)")
    args = benchkit.parse(ap, smoke={"notes": 40, "runs": 1, "requests": 3})
    with benchkit.workdir("bench-bases", keep=args.work) as work:
        settings = benchkit.indexed_vault(work / "vault", args.notes)
        reader = SnapshotReader(settings, vault_for_settings(settings))
        try:
            tag = common_tag(reader)
            (Path(settings.vault) / "Bench.base").write_text(VIEW.format(tag=tag), encoding="utf-8")
            build_index(settings)  # records Bench.base
            runs = [one_run(reader, args.requests) for _ in range(args.runs)]
        finally:
            reader.close()
    figures: dict[str, Any] = {"notes": args.notes, "tag": tag, "requests": args.requests, "runs": args.runs}
    for key in ("first_ms", "p50_ms", "p99_ms", "cpu_p50_ms", "list_first_ms", "list_p50_ms"):
        figures[key] = round(statistics.median(r[key] for r in runs), 2)
    figures["rows"] = runs[-1]["rows"]
    one, every = parse_ms(200, 5 if not args.smoke else 1)
    figures["parse_200_lines_one_view_cpu_ms"] = round(one, 2)
    figures["parse_200_lines_all_views_cpu_ms"] = round(every, 2)
    benchkit.report(figures)


if __name__ == "__main__":
    main()
