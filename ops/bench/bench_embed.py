#!/usr/bin/env python3
"""Embedding throughput: how long `vault-agent index --embed` takes to embed a whole vault.

    nice .venv/bin/python ops/bench/bench_embed.py [--notes 10000] [--work DIR] [--runs 3] [--threads N]

Setup (once, reused from --work): a generated vault (ops/gen_vault.py, seed 1) and its
lexical index (`vault-agent index`). Each run copies that lexical-only state dir and times
`vault-agent index --embed --json` on the copy, as a user runs it: wall time from start to
exit (the model load included), and the CPU of the process and its embedding worker
(getrusage of waited-for children), and the embedding worker's peak RSS (its VmHWM, read
from /proc while it runs; the worker is named in embedder.json). Model-agnostic: it runs
whatever model `vault_agent.semantic.encoder` chooses here, and prints the model id. Prints JSON lines; the last
one is the summary with medians, notes per second, CPU ms per note and the machine's load
(`uptime`; each run also gives the load before and after it). Target (issue 22): 10k notes in at most 5 min
wall on 2 idle cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import benchkit

REPO = benchkit.REPO
VAULT_AGENT = [sys.executable, "-c", "from vault_agent.cli.main import run; run()"]


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VAULT_AGENT, *args], env=env, cwd=cwd, capture_output=True, text=True, check=True)


def _hwm_mb(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return int(text.split("VmHWM:")[1].split()[0]) // 1024 if "VmHWM:" in text else None


def run_watching_worker(
    args: list[str], env: dict[str, str], cwd: Path, state: Path
) -> tuple[str, int | None]:
    """Run the CLI; return its stdout and the embedding worker's peak RSS in MB."""
    proc = subprocess.Popen([*VAULT_AGENT, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, text=True)
    peak: int | None = None
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.wait(0.5):
            try:
                pid = json.loads((state / "embedder.json").read_text()).get("worker_pid")
            except (OSError, ValueError):
                continue
            hwm = _hwm_mb(int(pid)) if pid else None
            if hwm is not None:
                peak = max(peak or 0, hwm)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    stop.set()
    watcher.join()
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, args)
    return out, peak


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument(
        "--work", type=Path, default=None, help="keeps the vault and its lexical index between runs"
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--threads", type=int, default=0, help="VAULT_AGENT_EMBED_THREADS (default: the product's)"
    )
    args = benchkit.parse(ap, smoke={"notes": 20, "runs": 1}, argv=argv)
    with benchkit.workdir("bench-embed", keep=args.work) as work:
        return _measure(args, work)


def _measure(args: argparse.Namespace, work: Path) -> int:
    vault, lexical = work / f"vault-{args.notes}", work / f"lexical-{args.notes}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if args.threads:
        env["VAULT_AGENT_EMBED_THREADS"] = str(args.threads)
    benchkit.generated_vault(vault, args.notes)
    if not lexical.exists():
        t0 = time.perf_counter()
        run_cli(["index", "--vault", str(vault), "--index-dir", str(lexical)], env, work)
        print(
            json.dumps(
                {"setup": "lexical index", "notes": args.notes, "seconds": round(time.perf_counter() - t0, 1)}
            )
        )
    from vault_agent.semantic.encoder import active_model

    rows = []
    for i in range(args.runs):
        state = work / "run-state"
        shutil.rmtree(state, ignore_errors=True)
        shutil.copytree(lexical, state)
        subprocess.run(["sync"], check=False)  # the copy's dirty pages are not the run's I/O
        before = benchkit.load_line()
        cpu0, t0 = children_cpu_s(), time.perf_counter()
        out, worker_peak = run_watching_worker(
            ["index", "--embed", "--json", "--vault", str(vault), "--index-dir", str(state)], env, work, state
        )
        wall, cpu = time.perf_counter() - t0, children_cpu_s() - cpu0
        data = json.loads(out)["data"]
        row = {
            "run": i + 1,
            "notes": data["noteCount"],
            "embedded": data.get("embeddedNotes"),
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "notes_per_s": round(data["noteCount"] / wall, 1),
            "cpu_ms_per_note": round(1000 * cpu / max(data["noteCount"], 1), 2),
            "worker_peak_rss_mb": worker_peak,
            "load_before": before,
            "load_after": benchkit.load_line(),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    shutil.rmtree(work / "run-state", ignore_errors=True)
    summary = {
        "model": active_model().model_id,
        "dim": active_model().dim,
        "threads": args.threads or "default",
        "cores": os.cpu_count(),
        "notes": args.notes,
        "runs": len(rows),
        "median_wall_s": round(statistics.median(r["wall_s"] for r in rows), 1),
        "median_cpu_s": round(statistics.median(r["cpu_s"] for r in rows), 1),
        "median_notes_per_s": round(statistics.median(r["notes_per_s"] for r in rows), 1),
        "median_cpu_ms_per_note": round(statistics.median(r["cpu_ms_per_note"] for r in rows), 2),
        "max_worker_peak_rss_mb": max((r["worker_peak_rss_mb"] or 0 for r in rows), default=None),
        # What 2 idle cores would take: the CPU spread over both (the embedder scales with
        # threads, bench output of --threads 1 vs 2 shows how well).
        "projected_wall_s_2_idle_cores": round(statistics.median(r["cpu_s"] for r in rows) / 2, 1),
    }
    benchkit.report({"summary": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
