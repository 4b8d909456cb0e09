#!/usr/bin/env python3
"""Save→fresh per edit, with the writer's phases and Python GC pauses that overlap each edit.

    VAULT_AGENT_SEMANTIC=0 nice -n 5 .venv/bin/python ops/bench/bench_savefresh_phases.py \
        --vault V --index-dir S [--edits 64] [--gap 1.2] [--seed 7] [--top 5]

V and S: writable copies of an indexed vault and its state (the bench appends to notes of V;
S's writer lock must be free). Same measurement as `bench_index.py --skip-full --vault`
(a `vault-agent watch` child; an edit appends a line to a random note and ends when CURRENT
names a snapshot holding the note's new mtime and freshness says `fresh`), but the child
runs with timing wrappers put around the writer's functions from this script only (the
product logs nothing): each span (wall start/end on the shared monotonic clock, thread CPU,
thread) and each Python garbage collection (generation, duration) goes to a JSON-lines file.
Prints the save→fresh summary, then for the slowest `--top` edits and for the median edit
the spans and collections that overlapped them. Runs whatever `vault_agent` is first on
sys.path of the given python.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import benchkit

HERE = Path(__file__).resolve().parent

CHILD = r"""
import sys
sys.path.insert(0, sys.argv.pop(1))
import savefresh_tap
savefresh_tap.install(sys.argv.pop(1))
from vault_agent.cli.main import run
run()
"""


def _manifest_has(idx: Path, rel: str, mtime_ns: int) -> bool:
    sys.path.insert(0, str(HERE))
    from bench_index import _manifest_has as has

    return bool(has(idx, rel, mtime_ns))


def _run(args: argparse.Namespace, spans_file: Path) -> list[dict[str, Any]]:
    from vault_agent.config import load_settings
    from vault_agent.freshness import compute_freshness, read_current_manifest

    settings = load_settings({"vault": args.vault, "index_dir": args.index_dir}, env={})
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_") or k == "VAULT_AGENT_SEMANTIC"
    }
    cmd = [sys.executable, "-c", CHILD, str(HERE), str(spans_file), "watch"]
    cmd += ["--vault", str(args.vault), "--index-dir", str(args.index_dir)]
    # cwd: `python -c` puts the working directory first on sys.path, so started from a
    # checkout the child would import that checkout's vault_agent instead of the given
    # python's (an old-vs-new run would then run the same code twice).
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=spans_file.parent
    )
    pause = threading.Event()
    edits: list[dict[str, Any]] = []
    try:
        line = proc.stderr.readline() if proc.stderr else b""
        if not line.startswith(b"watching"):
            raise SystemExit(f"watch did not start: {line!r}")
        rng = random.Random(args.seed)
        notes = sorted(
            p.relative_to(args.vault).as_posix()
            for p in args.vault.rglob("*.md")
            if ".vault-agent" not in p.parts
        )
        pause.wait(args.gap)
        for i in range(args.edits):
            rel = rng.choice(notes)
            t0 = time.perf_counter()
            with open(args.vault / rel, "a", encoding="utf-8") as fh:
                fh.write(f"\nbench edit {i}\n")
            mtime = (args.vault / rel).stat().st_mtime_ns
            deadline = t0 + 30
            seen = 0.0
            while True:
                if _manifest_has(args.index_dir, rel, mtime):
                    seen = seen or time.perf_counter()
                    m = read_current_manifest(args.index_dir)
                    if m is not None and compute_freshness(settings, m, stat_checker=None) == "fresh":
                        break
                if time.perf_counter() > deadline:
                    print(f"# edit {i} did not reach a fresh snapshot within 30 s", flush=True)
                    break
                pause.wait(0.002)
            t1 = time.perf_counter()
            edits.append({"i": i, "t0": t0, "t1": t1, "ms": (t1 - t0) * 1000, "seen_ms": (seen - t0) * 1000})
            pause.wait(args.gap)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    return edits


def _load_spans(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    spans: list[dict[str, Any]] = []
    gcs: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        (gcs if rec.get("kind") == "gc" else spans).append(rec)
    return spans, gcs


def _overlap(rec: dict[str, Any], t0: float, t1: float) -> bool:
    return float(rec["s"]) < t1 and float(rec["e"]) > t0


def _describe(edit: dict[str, Any], spans: list[dict[str, Any]], gcs: list[dict[str, Any]]) -> str:
    t0, t1 = float(edit["t0"]), float(edit["t1"])
    out = [f"edit {edit['i']}: {edit['ms']:.1f} ms (manifest seen at {edit['seen_ms']:.1f})"]
    for r in sorted((r for r in spans if _overlap(r, t0, t1)), key=lambda r: float(r["s"])):
        s, e = (float(r["s"]) - t0) * 1000, (float(r["e"]) - t0) * 1000
        out.append(
            f"   {s:8.1f} {e:8.1f}  wall {e - s:7.1f}  cpu {float(r['cpu']):7.1f}  [{r['thread']}] {r['name']}"
        )
    g = [r for r in gcs if _overlap(r, t0, t1)]
    by_gen: dict[int, list[float]] = {}
    for r in g:
        by_gen.setdefault(int(r["gen"]), []).append((float(r["e"]) - float(r["s"])) * 1000)
    for gen, ds in sorted(by_gen.items()):
        out.append(f"   gc gen{gen}: {len(ds)} collections, {sum(ds):.1f} ms total, max {max(ds):.1f} ms")
    return "\n".join(out)


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--vault", type=Path, help="required but under --smoke")
    ap.add_argument("--index-dir", type=Path, help="required but under --smoke")
    ap.add_argument("--edits", type=int, default=64)
    ap.add_argument("--gap", type=float, default=1.2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--label", default="")
    args = benchkit.parse(ap, smoke={"edits": 2, "gap": 0.2, "top": 1})
    with benchkit.workdir("savefresh") as work:
        benchkit.inputs_or_smoke(ap, args, work, "vault", "index_dir")
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        spans_file = Path(tmp) / "spans.jsonl"
        load0 = os.getloadavg()[0]
        edits = _run(args, spans_file)
        spans, gcs = _load_spans(spans_file)
    lat = sorted(float(e["ms"]) for e in edits)
    gen2 = [(float(r["e"]) - float(r["s"])) * 1000 for r in gcs if r["gen"] == 2]
    summary = {
        "label": args.label,
        "edits": len(lat),
        "save_to_fresh_ms_p50": round(lat[len(lat) // 2], 1),
        "save_to_fresh_ms_p99": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1),
        "slowest": [round(x, 1) for x in lat[::-1][:5]],
        "gc_gen2_count": len(gen2),
        "gc_gen2_ms_max": round(max(gen2), 1) if gen2 else 0.0,
        "load_before": round(load0, 2),
        "uptime_after": benchkit.load_line(),
    }
    print(json.dumps(summary), flush=True)
    ranked = sorted(edits, key=lambda e: -float(e["ms"]))
    median = sorted(edits, key=lambda e: float(e["ms"]))[len(edits) // 2]
    for e in [*ranked[: args.top], median]:
        print(_describe(e, spans, gcs))
    walls: dict[str, list[float]] = {}
    for r in spans:
        walls.setdefault(str(r["name"]), []).append((float(r["e"]) - float(r["s"])) * 1000)
    t_first = float(edits[0]["t0"]) if edits else 0.0
    for r in gcs:
        if r["gen"] != 2:
            continue
        gc_s, gc_e = float(r["s"]), float(r["e"])
        hit = [int(x["i"]) for x in edits if float(x["t0"]) < gc_e and float(x["t1"]) > gc_s]
        print(f"# gc gen2 at {gc_s - t_first:+8.2f} s: {(gc_e - gc_s) * 1000:.1f} ms, during edits {hit}")
    print("# all spans: name, count, p50 / max wall ms")
    for name, ws in sorted(walls.items()):
        print(f"   {len(ws):5d} {statistics.median(ws):8.1f} {max(ws):8.1f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
