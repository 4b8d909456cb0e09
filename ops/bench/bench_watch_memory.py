"""RSS of a long `watch` while notes are edited: small batches parse inline in the writer,
so anything a parse leaves behind shows up here as growth, round after round.

    .venv/bin/python ops/bench/bench_watch_memory.py /work/bench-data/v10k \
        --exe /work/wt-parser/.venv/bin/vault-agent [--exe /work/main/.venv/bin/vault-agent] \
        [--notes 200] [--edit 100] [--rounds 40]

Per executable: the first --notes notes of the vault are copied (never linked) to a fresh
temporary vault and indexed; then `EXE watch` runs while each round appends a line to
--edit of them (a different half each round) and waits until `status` reports the index
fresh again (so every round's edits were parsed); the watch process's VmRSS is read after
each round. Prints RSS per round and the growth from round 5 on (start-up caches filled),
as a table and one JSON line; the machine load (`uptime`) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit


def notes_of(vault: Path, count: int) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(vault):
        dirs.sort()
        found += [Path(folder, f) for f in sorted(files) if f.endswith(".md")]
        if len(found) >= count:
            break
    return found[:count]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def wait_fresh(exe: str, vault: Path, state: Path, bound_s: float = 300) -> None:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        out = subprocess.run(
            [exe, "status", "--json", "--vault", str(vault), "--index-dir", str(state)],
            capture_output=True,
            text=True,
        )
        if out.returncode == 0 and json.loads(out.stdout)["data"]["indexFreshness"] == "fresh":
            return
        time.sleep(0.2)
    raise TimeoutError("the index did not become fresh")


def run_one(exe: str, source: Path, notes: int, edit: int, rounds: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="watchmem-") as tmp:
        vault, state = Path(tmp, "vault"), Path(tmp, "state")
        rels = []
        for src in notes_of(source, notes):
            rel = src.relative_to(source)
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, vault / rel)
            rels.append(rel)
        subprocess.run(
            [exe, "index", "--vault", str(vault), "--index-dir", str(state)], check=True, capture_output=True
        )
        proc = subprocess.Popen(
            [exe, "watch", "--vault", str(vault), "--index-dir", str(state)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        series: list[float] = []
        try:
            wait_fresh(exe, vault, state)
            for r in range(rounds):
                start = (r % 2) * (len(rels) - edit)
                for rel in rels[start : start + edit]:
                    with open(vault / rel, "a", encoding="utf-8") as fh:
                        fh.write(f"\nEdit {r} with *emphasis*, a [[link {r}]] and `code`.\n")
                wait_fresh(exe, vault, state)
                series.append(rss_mib(proc.pid))
                print(f"  {exe}: round {r + 1}/{rounds}: {series[-1]:.1f} MiB", file=sys.stderr, flush=True)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return series


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("vault", type=Path, nargs="?")
    ap.add_argument(
        "--exe",
        action="append",
        help="a vault-agent executable (repeat to compare); required but under --smoke",
    )
    ap.add_argument("--notes", type=int, default=200)
    ap.add_argument("--edit", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=40)
    args = benchkit.parse(ap, smoke={"exe": [benchkit.CLI], "notes": 20, "edit": 5, "rounds": 2})
    if not args.exe:
        ap.error("--exe is required (or --smoke)")
    with benchkit.workdir("watch-memory-vault") as made:
        benchkit.inputs_or_smoke(ap, args, made, "vault", notes=40, indexed=False)
        _measure(args)


def _measure(args: argparse.Namespace) -> None:
    load_before = benchkit.load_line()
    result = {}
    for exe in args.exe:
        series = run_one(exe, args.vault, args.notes, args.edit, args.rounds)
        base = series[min(4, len(series) - 1)]
        result[exe] = {
            "rss_mib": [round(x, 1) for x in series],
            "growth_from_round_5_mib": round(series[-1] - base, 1),
            "notes_parsed": args.edit * args.rounds,
        }
        print(
            f"{exe}: round 5 {base:.1f} MiB, last {series[-1]:.1f} MiB, growth {series[-1] - base:+.1f} MiB"
        )
    load_after = benchkit.load_line()
    print(json.dumps({"load_before": load_before, "load_after": load_after, "runs": result}))


if __name__ == "__main__":
    main()
