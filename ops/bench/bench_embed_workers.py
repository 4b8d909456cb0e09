#!/usr/bin/env python3
"""How the embedder should use the cores: workers x threads, side by side in one run.

    nice .venv/bin/python ops/bench/bench_embed_workers.py [--notes 2000] [--passages 512]
        [--configs 1x2,1x2i,2x1,1x1] [--runs 3] [--work DIR]

Configurations (W workers x T threads; every worker a process at nice +10 from this one,
the product's WORKER_NICE, loading the e5 encoder, reading the passages of the state's
largest segment like the product's worker, then embedding its share of `--passages`
passages shortest first in calls of 64, as embed_job does):
- `1x2`: one worker, two threads each calling the session (one onnxruntime thread per call);
- `1x2i`: one worker, one caller, the session on two intra-op threads (no spinning);
- `2x1`: two workers (two model copies), one thread each, half the passages each;
- `1x1`: one worker, one thread.
Meanwhile this process (the server's stand-in, at its own priority) asks a hybrid search
every --pace-s over the same state (its vectors made by bench_semantic_scale.fake_embed: the
queries' cost does not depend on their values; the query encoder is real) and times each.
Before every configuration, the same queries with no embedding running: the baseline.

Per configuration and run, a JSON line: wall from "go" to the last worker done, the workers'
CPU seconds while embedding (their own getrusage), passages per CPU second, each worker's
peak RSS (VmHWM: model, passages and embedding), and search p50/p99 during it against the
baseline's. The summary has the medians and, against `1x1`, the CPU a passage costs
(`cpu_ratio`: > 1 when threads slow each other: shared caches, memory bandwidth, wake-ups)
and the wall speedup (meaningful on an idle machine only: on a loaded one the workers wait
for a core). The configurations alternate within each run, starting one later each run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import benchkit

REPO = benchkit.REPO
WORKER_NICE = 10  # vault_agent.semantic.embedder.WORKER_NICE
CALL_PASSAGES = 64  # vault_agent.semantic.embedder.EMBED_BATCH_PASSAGES
QUERIES = [
    "how do we plan the release review",
    "garden watering schedule",
    "budget for the kitchen renovation",
    "notes about the database migration",
    "what did the team decide about hiring",
]

WORKER = """
import json, os, resource, sys, time
from concurrent.futures import ThreadPoolExecutor
state, share, of, count, callers, intra, nice = sys.argv[1:8]
share, of, count, callers, intra = int(share), int(of), int(count), int(callers), int(intra)
os.nice(int(nice))
from vault_agent.freshness import read_current_manifest
from vault_agent.heap import use_system_arrow_pool
from vault_agent.semantic.e5_encoder import load_e5
from vault_agent.semantic.e5_weights import find_weights
from vault_agent.semantic.embed_job import segment_passages
from vault_agent.semantic.vectors import quantize

def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime

def status(key):
    text = open("/proc/self/status").read()
    return int(text.split(key + ":")[1].split()[0]) // 1024

use_system_arrow_pool()
c0 = cpu()
enc = load_e5(find_weights(), threads=intra)
manifest = read_current_manifest(state)
seg = max(manifest.segments, key=lambda s: s.note_count)
passages = segment_passages(state, seg)[:count][share::of]
texts = sorted((p.text for p in passages), key=len)
calls = [texts[i : i + CALL] for i in range(0, len(texts), CALL)]
tokens = sum(enc.count_tokens(t) for t in texts)
print(json.dumps({"ev": "ready", "load_cpu_s": cpu() - c0, "rss_ready_mb": status("VmRSS")}), flush=True)
sys.stdin.readline()
c0, t0 = cpu(), time.perf_counter()
with ThreadPoolExecutor(callers) as pool:
    list(pool.map(lambda call: quantize(enc.embed_passages(call)), calls))
print(json.dumps({"ev": "done", "cpu_s": cpu() - c0, "wall_s": time.perf_counter() - t0,
                  "passages": len(texts), "tokens": tokens, "hwm_mb": status("VmHWM")}), flush=True)
""".replace("CALL", str(CALL_PASSAGES))

CONFIGS = {"1x2": (1, 2, 1), "1x2i": (1, 1, 2), "2x1": (2, 1, 1), "1x1": (1, 1, 1)}  # workers, callers, intra


class Searches:
    """Hybrid searches every `pace_s` on a thread, each timed (ms)."""

    def __init__(self, reader: Any, pace_s: float) -> None:
        from vault_agent.query.search import SearchRequest, search

        self._search, self._request, self._reader, self._pace = search, SearchRequest, reader, pace_s
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        i = 0
        while not self._stop.is_set():
            t0 = time.perf_counter()
            self._search(self._reader, self._request(QUERIES[i % len(QUERIES)], 10, mode="hybrid"))
            self.times.append((time.perf_counter() - t0) * 1000)
            i += 1
            self._stop.wait(max(0.0, self._pace - (time.perf_counter() - t0)))

    def __enter__(self) -> Searches:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 1) if ordered else 0.0


def _run_config(name: str, state: Path, args: argparse.Namespace, reader: Any) -> dict[str, Any]:
    workers, callers, intra = CONFIGS[name]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                str(state),
                str(k),
                str(workers),
                str(args.passages),
                str(callers),
                str(intra),
                str(WORKER_NICE),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )  # fmt: skip
        for k in range(workers)
    ]
    ready = [json.loads(p.stdout.readline()) for p in procs if p.stdout is not None]
    with Searches(reader, args.pace_s) as idle:
        while len(idle.times) < args.baseline_queries:
            time.sleep(args.pace_s)
    with Searches(reader, args.pace_s) as busy:
        t0 = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        done = [json.loads(p.stdout.readline()) for p in procs if p.stdout is not None]
        wall = time.perf_counter() - t0
    for p in procs:
        p.wait()
    cpu = sum(d["cpu_s"] for d in done)
    passages = sum(d["passages"] for d in done)
    return {
        "config": name,
        "workers": workers,
        "callers": callers,
        "intra_op_threads": intra,
        "passages": passages,
        "tokens": sum(d["tokens"] for d in done),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "passages_per_cpu_s": round(passages / cpu, 2),
        "worker_peak_rss_mb": [d["hwm_mb"] for d in done],
        "worker_ready_rss_mb": [r["rss_ready_mb"] for r in ready],
        "search_idle_p50_ms": _pct(idle.times, 0.5),
        "search_idle_p99_ms": _pct(idle.times, 0.99),
        "search_busy_p50_ms": _pct(busy.times, 0.5),
        "search_busy_p99_ms": _pct(busy.times, 0.99),
        "searches_busy": len(busy.times),
        "load": benchkit.load_line(),
    }


def _summary(rows: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    def med(name: str, key: str) -> float:
        return round(statistics.median(r[key] for r in rows if r["config"] == name), 2)

    out: dict[str, Any] = {}
    for name in names:
        out[name] = {
            key: med(name, key)
            for key in ("wall_s", "cpu_s", "passages_per_cpu_s", "search_idle_p99_ms", "search_busy_p50_ms",
                        "search_busy_p99_ms")
        } | {"worker_peak_rss_mb": max(max(r["worker_peak_rss_mb"]) for r in rows if r["config"] == name)}  # fmt: skip
        if "1x1" in names:
            out[name]["cpu_ratio_vs_1x1"] = round(
                med("1x1", "passages_per_cpu_s") / med(name, "passages_per_cpu_s"), 3
            )
            out[name]["wall_speedup_vs_1x1"] = round(med("1x1", "wall_s") / med(name, "wall_s"), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--passages", type=int, default=512, help="passages per configuration and run")
    ap.add_argument("--configs", default="1x2,1x2i,2x1,1x1")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pace-s", type=float, default=0.25, help="seconds between searches")
    ap.add_argument("--baseline-queries", type=int, default=40)
    ap.add_argument("--work", type=Path, default=None, help="keeps the vault and its state between runs")
    args = benchkit.parse(ap, smoke={"notes": 20, "passages": 8, "runs": 1, "baseline_queries": 2}, argv=argv)
    with benchkit.workdir("bench-embed-workers", keep=args.work) as work:
        return _measure(args, work)


def _measure(args: argparse.Namespace, work: Path) -> int:
    import bench_semantic_scale

    from vault_agent.freshness import read_current_manifest, vault_for_settings
    from vault_agent.query.snapshot import SnapshotReader
    from vault_agent.semantic.encoder import active_model
    from vault_agent.semantic.store import TABLE

    if active_model().kind != "e5":
        benchkit.report({"error": "the e5 model is not installed here", "model": active_model().model_id})
        return 0
    settings = benchkit.indexed_vault(work / f"vault-{args.notes}", args.notes)
    manifest = read_current_manifest(settings.index_dir)
    if manifest is not None and not any(TABLE in s.files for s in manifest.segments):
        bench_semantic_scale.fake_embed(settings.index_dir, settings.vault)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    names = [n for n in args.configs.split(",") if n in CONFIGS]
    print(json.dumps({"configs": names, "passages": args.passages, "cores": os.cpu_count(),
                      "load": benchkit.load_line()}), flush=True)  # fmt: skip
    rows = []
    try:
        for run in range(args.runs):
            for name in names[run % len(names) :] + names[: run % len(names)]:
                row = _run_config(name, settings.index_dir, args, reader) | {"run": run + 1}
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        reader.close()
    benchkit.report({"summary": _summary(rows, names), "runs": args.runs})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
