#!/usr/bin/env python3
"""Indexer benchmark: full index time, save→fresh latency, peak RSS, snapshot size.

    .venv/bin/python ops/bench/bench_index.py --notes 10000 --runs 3 --edits 100
    .venv/bin/python ops/bench/bench_index.py --notes 10000 100000

Vaults come from `ops/gen_vault.py OUT --notes N --seed 1` (generated once into --workdir).
Full index: `build_index(full=True)` in a fresh subprocess per run (median of --runs), peak
RSS of that process tree. Save→fresh: a `vault-agent watch` subprocess; each edit appends a
line to a random note and waits until CURRENT names a snapshot whose notes carry the new
mtime and the writer reports `fresh`. Prints one JSON object per vault size.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import benchkit

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable

FULL_CHILD = r"""
import json, resource, sys, time
from vault_agent.config import load_settings
from vault_agent.indexer.build import build_index
s = load_settings({"vault": sys.argv[1], "index_dir": sys.argv[2]}, env={})
t = time.perf_counter()
m = build_index(s, full=True)
wall = time.perf_counter() - t
ru_me = resource.getrusage(resource.RUSAGE_SELF)
ru_ch = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru_me.ru_utime + ru_me.ru_stime + ru_ch.ru_utime + ru_ch.ru_stime
print(json.dumps({"wall": wall, "notes": m.note_count, "chunks": m.chunk_count, "cpu_s": cpu,
                  "segments": len(m.segments), "rss_main_kb": ru_me.ru_maxrss, "rss_worker_kb": ru_ch.ru_maxrss}))
"""


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _ensure_vault(workdir: Path, notes: int) -> Path:
    vault = workdir / f"vault-{notes}"
    if not vault.exists():
        subprocess.run(
            [PY, str(REPO / "ops" / "gen_vault.py"), str(vault), "--notes", str(notes), "--seed", "1"],
            check=True,
        )
    return vault


def _full_runs(vault: Path, workdir: Path, runs: int) -> dict[str, object]:
    results = []
    idx = workdir / f"idx-{vault.name}"
    for _ in range(runs):
        shutil.rmtree(idx, ignore_errors=True)
        out = subprocess.run(
            [PY, "-c", FULL_CHILD, str(vault), str(idx)], capture_output=True, text=True, check=True
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    walls = [r["wall"] for r in results]
    med = statistics.median(walls)
    size = _du(idx / "segments") + _du(idx / "snapshots")
    return {
        "full_index_s_median": round(med, 2),
        "full_index_s_runs": [round(w, 2) for w in walls],
        "notes_per_s": round(results[0]["notes"] / med),
        "cpu_s_median": round(statistics.median(r["cpu_s"] for r in results), 1),
        "notes": results[0]["notes"],
        "chunks": results[0]["chunks"],
        "segments": results[0]["segments"],
        "peak_rss_main_mib": round(max(r["rss_main_kb"] for r in results) / 1024),
        "peak_rss_worker_mib": round(max(r["rss_worker_kb"] for r in results) / 1024),
        "snapshot_bytes": size,
    }


def _manifest_has(idx: Path, rel: str, mtime_ns: int) -> bool:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from vault_agent.freshness import read_current_manifest

    m = read_current_manifest(idx)
    if m is None:
        return False
    seg = m.segments[-1]  # an edit lands in the newest segment
    if rel in seg.deleted:
        return False
    t = pq.read_table(
        idx / "segments" / seg.files["notes"], columns=["path", "mtime_ns"], filters=[("path", "=", rel)]
    )
    return t.num_rows == 1 and pc.max(t.column("mtime_ns")).as_py() == mtime_ns


def _save_to_fresh(
    vault: Path, workdir: Path, edits: int, seed: int = 7, idx: Path | None = None, gap_s: float = 0.05
) -> dict[str, object]:
    from vault_agent.config import load_settings
    from vault_agent.freshness import compute_freshness, read_current_manifest

    idx = idx or workdir / f"idx-{vault.name}"
    settings = load_settings({"vault": vault, "index_dir": idx}, env={})
    # VAULT_AGENT_SEMANTIC passes (=0: no background embedding of the whole vault beside the edits)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_") or k == "VAULT_AGENT_SEMANTIC"
    }
    proc = subprocess.Popen(
        [
            PY,
            "-c",
            "from vault_agent.cli.main import run; run()",
            "watch",
            "--vault",
            str(vault),
            "--index-dir",
            str(idx),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    pause = threading.Event()
    try:
        line = proc.stderr.readline() if proc.stderr else b""
        if not line.startswith(b"watching"):
            raise SystemExit(f"watch did not start: {line!r}")
        rng = random.Random(seed)
        notes = sorted(
            p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".vault-agent" not in p.parts
        )
        lat = []
        for i in range(edits):
            rel = rng.choice(notes)
            t0 = time.perf_counter()
            with open(vault / rel, "a", encoding="utf-8") as fh:
                fh.write(f"\nbench edit {i}\n")
            mtime = (vault / rel).stat().st_mtime_ns
            deadline = t0 + 30
            while True:
                if _manifest_has(idx, rel, mtime):
                    m = read_current_manifest(idx)
                    if m is not None and compute_freshness(settings, m, stat_checker=None) == "fresh":
                        break
                if time.perf_counter() > deadline:
                    raise SystemExit("an edit did not reach a fresh snapshot within 30 s")
                pause.wait(0.002)
            lat.append(time.perf_counter() - t0)
            # Let the writer settle (compaction, GC) between edits. With a short gap the edits
            # are a sustained stream, so the commit pacing (≤ 1 commit/s on average) sets the
            # latency; a gap above MIN_COMMIT_GAP_S measures one save's latency.
            pause.wait(gap_s)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    slowest = sorted(range(len(lat)), key=lambda k: -lat[k])[:3]
    lat.sort()
    return {
        "slowest_edits": [
            (k, round(1000 * sorted_lat, 1)) for k, sorted_lat in zip(slowest, lat[::-1][:3], strict=True)
        ],
        "save_to_fresh_ms_p50": round(1000 * lat[len(lat) // 2], 1),
        "save_to_fresh_ms_p99": round(1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1),
        "edits": len(lat),
    }


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, nargs="+", default=[10000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "vault-agent-bench")
    ap.add_argument("--skip-full", action="store_true", help="only save→fresh (needs a previous run's index)")
    ap.add_argument(
        "--vault", type=Path, help="with --skip-full: an indexed vault (a writable copy) instead of --notes"
    )
    ap.add_argument("--index-dir", type=Path, help="with --vault: its state dir")
    ap.add_argument("--seed", type=int, default=7, help="which notes the edits pick")
    ap.add_argument(
        "--gap", type=float, default=0.05, help="seconds between an edit turning fresh and the next"
    )
    args = benchkit.parse(ap, smoke={"notes": [40], "runs": 1, "edits": 3})
    if args.vault is not None:
        res: dict[str, object] = {"vault": args.vault.name, "load_avg_before": os.getloadavg()[0]}
        res.update(_save_to_fresh(args.vault, args.workdir, args.edits, args.seed, args.index_dir, args.gap))
        res["gap_s"] = args.gap
        res["load_avg_after"] = os.getloadavg()[0]
        print(json.dumps(res), flush=True)
        return
    args.workdir.mkdir(parents=True, exist_ok=True)
    for n in args.notes:
        vault = _ensure_vault(args.workdir, n)
        res = {"vault_notes": n, "load_avg_before": os.getloadavg()[0]}
        if not args.skip_full:
            res.update(_full_runs(vault, args.workdir, args.runs))
        res.update(_save_to_fresh(vault, args.workdir, args.edits))
        res["load_avg_after"] = os.getloadavg()[0]
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
