#!/usr/bin/env python3
"""vault_query latency at scale: in process (the core function) and over HTTP (POST /query).

    nice -n 5 .venv/bin/python ops/bench/bench_query.py --notes 100000 --work /tmp/bench-query
    .venv/bin/python ops/bench/bench_query.py --vault V --state S        # an existing index

Generates the vault with ops/gen_vault.py (seed 1, with its typed properties and inline
tags) and indexes it once (both reused when present). Then, per run, p50/p99 over
--requests calls of each case (a tag, a property of each type, combined filters, a sort on
a property with and without a filter, DQL), in process through `vault_query` with one
SnapshotReader, and over HTTP against `vault-agent serve --port 0` (no watcher) started on
the same state; DQL parse + plan alone (`compile_dql`, no I/O). Prints the median over
--runs as one JSON object with the load average before and after.
"""

from __future__ import annotations

import functools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

from vault_agent.config import Settings
from vault_agent.contracts import CURRENT_FILE
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.dql_compile import compile_dql
from vault_agent.query.structured.filters import Filters, WhereItem
from vault_agent.query.structured.run import QueryRequest, vault_query
from vault_agent.query.structured.values import system_clock

REPO = Path(__file__).resolve().parents[2]

DQL_HEAVY = (
    'TABLE priority, due AS "Due", file.mtime FROM #{tag} OR "projects" '
    "WHERE priority >= 3 AND !done AND due < date(today) + dur(90 days) SORT due DESC LIMIT 100"
)


KEYS = ("p50_ms", "p99_ms", "cpu_p50_ms")


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn: Callable[[], Any], n: int, cpu: Callable[[], float] = time.process_time) -> dict[str, float]:
    """Wall p50/p99 and the median CPU time per call (`cpu`: this process's CPU seconds by
    default, DuckDB's threads included; a server's for HTTP). On a loaded machine the wall
    time mostly waits for a core; the CPU time is what a quiet one would need."""
    fn()  # warm: the first call of a case loads what it reads
    samples, cpus = [], []
    for _ in range(n):
        c0, t0 = cpu(), time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
        cpus.append((cpu() - c0) * 1000)
    return {"p50_ms": round(pct(samples, 0.5), 2), "p99_ms": round(pct(samples, 0.99), 2),
            "cpu_p50_ms": round(pct(cpus, 0.5), 2)}  # fmt: skip


def process_cpu(pid: int) -> Callable[[], float]:
    """CPU seconds (user + system) of another process, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    return read


def prepare(work: Path, notes: int, vault: Path | None, state: Path | None) -> Settings:
    vault = vault or work / "vault"
    if not vault.exists():
        subprocess.run(
            [sys.executable, str(REPO / "ops/gen_vault.py"), str(vault), "--notes", str(notes)], check=True
        )
    settings = Settings(vault=vault, index_dir=state or work / "state")
    if not (settings.index_dir / CURRENT_FILE).exists():
        t0 = time.perf_counter()
        build_index(settings, full=True)
        print(f"indexed in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return settings


def cases(tag: str, folder: str) -> dict[str, dict[str, Any]]:
    """The measured requests (vault_query parameters), gen_vault's fields."""
    w = lambda f, op, v=None: {"field": f, "op": op, "value": v}  # noqa: E731
    return {
        "tag": {"tags": [tag]},
        "tag_nested_any": {"any_tags": [tag.split("/")[0], "review"]},
        "prop_text": {"where": [w("status", "=", "active")]},
        "prop_number": {"where": [w("priority", ">=", 4)]},
        "prop_bool": {"where": [w("done", "=", True)]},
        "prop_date": {"where": [w("due", "<", "2025-03-01")]},
        "prop_exists": {"where": [w("reviewer", "missing")]},
        "tag_and_props": {"tags": [tag], "where": [w("status", "!=", "done"), w("priority", ">", 2)]},
        "folder_mtime": {"folder": folder, "modified_after": "2000-01-01"},
        "sort_prop_filtered": {"tags": [tag], "sort": "-priority", "select": ["priority", "due"]},
        "sort_prop_all": {"sort": "-priority", "select": ["priority"]},
        "sort_mtime_all": {"sort": "-mtime"},
        "dql_table": {"dql": DQL_HEAVY.format(tag=tag)},
        "dql_list": {"dql": f'LIST FROM #{tag} WHERE contains(authors, "data") OR rating > 4'},
    }


def request_of(params: dict[str, Any]) -> QueryRequest:
    p = dict(params)
    where = tuple(WhereItem(x["field"], x["op"], x.get("value")) for x in p.pop("where", []))
    dql = p.pop("dql", None)
    for key in ("tags", "any_tags", "select"):
        if key in p:
            p[key] = tuple(p[key])
    return QueryRequest(Filters(where=where, **p), dql=dql)


def common_tag(reader: SnapshotReader) -> tuple[str, str]:
    with reader.acquire() as view:
        tag = view.con.execute(
            "SELECT tag, count(*) c FROM tags WHERE tag LIKE '%/%' GROUP BY tag ORDER BY c DESC, tag LIMIT 1"
        ).fetchone()
        folder = view.con.execute(
            "SELECT split_part(folder, '/', 1) f, count(*) c FROM notes GROUP BY f ORDER BY c DESC, f LIMIT 1"
        ).fetchone()
    assert tag is not None and folder is not None
    return str(tag[0]), str(folder[0])


def in_process(settings: Settings, n: int) -> tuple[dict[str, Any], str, str]:
    reader = SnapshotReader(settings, vault_for_settings(settings))
    try:
        tag, folder = common_tag(reader)
        cache: dict[Any, Any] = {}
        out: dict[str, Any] = {}
        for name, params in cases(tag, folder).items():
            req = request_of(params)
            total = vault_query(reader, req, cache=cache).data.total
            out[name] = {**timed(functools.partial(vault_query, reader, req, cache=cache), n), "total": total}
        for name in ("dql_table", "dql_list"):
            text = cases(tag, folder)[name]["dql"]
            out[f"{name}_parse_plan"] = timed(functools.partial(compile_dql, text, system_clock), n * 5)
        return out, tag, folder
    finally:
        reader.close()


def over_http(settings: Settings, n: int, tag: str, folder: str) -> dict[str, Any]:
    token = "bench-query"
    env = {**os.environ, "VAULT_AGENT_INDEX_DIR": str(settings.index_dir), "VAULT_AGENT_TOKEN": token}
    cmd = [
        str(Path(sys.executable).parent / "vault-agent"),
        "serve",
        "--vault",
        str(settings.vault),
        "--port",
        "0",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        match = re.search(r"http://[\d.]+:\d+", proc.stdout.readline())
        assert match, "serve did not start"
        url = match.group(0) + "/query"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        def post(body: bytes) -> None:
            req = urllib.request.Request(
                url,
                data=body,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            with opener.open(req, timeout=600) as resp:
                resp.read()

        server_cpu = process_cpu(proc.pid)
        bodies = {name: json.dumps(params).encode() for name, params in cases(tag, folder).items()}
        return {name: timed(functools.partial(post, body), n, server_cpu) for name, body in bodies.items()}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-query")
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--state", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--no-http", action="store_true")
    args = benchkit.parse(ap, smoke={"notes": 40, "runs": 1, "requests": 3})
    settings = prepare(args.work, args.notes, args.vault, args.state)
    before = load()
    runs = []
    tag = folder = ""
    for _ in range(args.runs):
        local, tag, folder = in_process(settings, args.requests)
        http = {} if args.no_http else over_http(settings, args.requests, tag, folder)
        runs.append({"in_process": local, "http": http})
    summary: dict[str, Any] = {"tag": tag, "folder": folder, "notes": args.notes}
    for where in ("in_process", "http"):
        names = list(runs[0][where])
        summary[where] = {
            name: {key: round(statistics.median(r[where][name][key] for r in runs), 2) for key in KEYS}
            | ({"total": runs[0][where][name]["total"]} if "total" in runs[0][where][name] else {})
            for name in names
        }
    print(json.dumps({**summary, "runs": args.runs, "requests": args.requests, "load_before": before,
                      "load_after": load()}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
