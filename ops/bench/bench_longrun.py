#!/usr/bin/env python3
"""Long run of a real `vault-agent serve --watch`: does anything grow with time?

    nice .venv/bin/python ops/bench/bench_longrun.py --notes 10000 --minutes 60
    nice .venv/bin/python ops/bench/bench_longrun.py --notes 10000 --minutes 30 --edit-every 1.0   # disk
    nice .venv/bin/python ops/bench/bench_longrun.py --notes 100000 --minutes 20 --fake-embed
    .venv/bin/python ops/bench/bench_longrun.py --smoke

Setup (once per --workdir, --notes and --semantic, then reused): `ops/gen_vault.py`'s vault,
indexed (and with --semantic on, the default, every note embedded: `index --embed`) into a
base copy; each run starts from a fresh `cp -a` of the base, so runs are comparable.
Then `EXE serve --watch` runs as a subprocess (EXE: this checkout's console script, or
`--exe` another checkout's, for a side by side on the same base) while
- an editor appends a line to a random note every --edit-every seconds (the watcher path,
  as an editor saves), for --minutes;
- one client sends a request every --query-every seconds, cycling through search (rotating
  queries, default mode), overview, vault_query (a tag and a sort), search, read (a random
  note, whole) and vault_query (a property predicate);
- then, with --tail-s, only the queries go on (the embedder's idle exit, disk reclaimed
  once the edits stop).
Every --sample-s seconds one JSON line: RSS (and its anonymous and file-backed parts, and
the peak) of serve and of each child process (the embedding worker), serve's open
descriptors and threads, its CPU seconds, the state dir's bytes, files (each inode once)
and entries (every name: the engine's snapshot dirs hard-link files), the log lines written since the last sample besides request lines, the requests'
p50/p99 and errors since the last sample, the load.

The summary (last line): serve's RSS at the end of the warm-up (--warmup-s), its maximum
and last, and its slope over the second half of the run after the warm-up (least squares,
MB per 10 minutes), the same for serve plus children; the largest child; the state dir
during the edits against its live set at the start (the files CURRENT's snapshot needs)
and, with --tail-s, against the settled state at the end of the tail (edits stopped, the
writer compacted and collected: "its size after a compaction"), in bytes and files; log
lines per minute; request latencies. Issue 32's
targets at 10k notes: serve ≤ 450 MB after warm-up and slope ≤ 1 MB per 10 minutes over
60 minutes; the worker ≤ 350 MB and gone or idle-small when nothing is to embed; the
state dir within 2x of its live set at 1 edit/s for 30 minutes; at 100k, serve ≤ 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchkit

TOKEN = "bench-longrun-token"
QUERIES = ["project plan", "meeting notes", "pipeline", "budget review", "garden", "kernel module"]
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ processes
def _status(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon, RssFile, VmHWM (kB) and Threads of a process ({} once it is gone)."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM", "Threads"):
            out[key] = int(value.split()[0])
    return out


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _children(root: int) -> dict[int, str]:
    """Every descendant of `root`: pid → a short name (the module a Python child runs)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in found:
                try:
                    argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                words = [a.decode(errors="replace") for a in argv if a]
                module = (
                    words[words.index("-m") + 1]
                    if "-m" in words[:-1]
                    else Path(words[0]).name
                    if words
                    else "?"
                )
                found[child] = "embed-worker" if module.endswith("semantic.worker") else module
                frontier.append(child)
    return found


def _mb(kb: int | None) -> float | None:
    return None if kb is None else round(kb / 1024, 1)


# ------------------------------------------------------------------ state dir
def _dir_stats(state: Path) -> tuple[int, int, int]:
    """(bytes, files, entries) under the state dir: files count each inode once (the
    engine's snapshot dirs hard-link the same files), entries every name (`find | wc -l`)."""
    seen: dict[tuple[int, int], int] = {}
    entries = 0
    for root, _, files in os.walk(state):
        for name in files:
            try:
                st = os.stat(os.path.join(root, name))
            except FileNotFoundError:
                continue  # collected during the walk
            seen[(st.st_dev, st.st_ino)] = st.st_size
            entries += 1
    return sum(seen.values()), len(seen), entries


def _live_set(state: Path) -> tuple[int, int]:
    """(bytes, files) of what CURRENT's snapshot needs: everything but unreferenced segment
    files, other snapshots' engine dirs and other manifests (the size after a compaction
    and a collection, with no reader holding an older snapshot)."""
    current = (state / "CURRENT").read_text().strip()
    manifest = json.loads((state / "snapshots" / current).read_text())
    named = {f for seg in manifest["segments"] for f in seg["files"].values()}
    engine = manifest.get("search_index")
    seen: dict[tuple[int, int], int] = {}
    for root, dirs, files in os.walk(state):
        rel = Path(root).relative_to(state).parts
        if rel[:1] == ("search",) and len(rel) == 1:
            dirs[:] = [d for d in dirs if d in (engine, "work")]
        for name in files:
            if rel == ("segments",) and name not in named:
                continue
            if rel == ("snapshots",) and name != current:
                continue
            if rel == ("tmp",):
                continue
            st = os.stat(os.path.join(root, name))
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values()), len(seen)


# ------------------------------------------------------------------ setup
def _exe(args: argparse.Namespace) -> str:
    return str(args.exe) if args.exe else benchkit.CLI


def _base(args: argparse.Namespace, work: Path) -> Path:
    """The generated, indexed (and embedded) base of this size, made once per workdir."""
    fake = args.semantic == "on" and args.fake_embed
    base = work / f"base-{args.notes}-{args.semantic}{'-fake' if fake else ''}"
    if (base / "ready").exists():
        return base
    shutil.rmtree(base, ignore_errors=True)
    vault, state = base / "vault", base / "state"
    benchkit.generated_vault(vault, args.notes)
    cmd = [_exe(args), "index", "--vault", str(vault), "--index-dir", str(state)]
    if args.semantic == "on" and not fake:
        cmd.append("--embed")
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=_env(args), stdout=subprocess.DEVNULL)
    if fake:  # random vectors of the right model and layout: the serving side is the same
        import bench_semantic_scale

        bench_semantic_scale.fake_embed(state, vault)
    benchkit.report({"setup": "index" + (" --embed" if args.semantic == "on" else ""), "fake_embed": fake,
                     "notes": args.notes, "seconds": round(time.perf_counter() - t0, 1)})  # fmt: skip
    (base / "ready").write_text("")
    return base


def _env(args: argparse.Namespace) -> dict[str, str]:
    env = {**os.environ, "VAULT_AGENT_TOKEN": TOKEN, "VAULT_AGENT_SEMANTIC": args.semantic}
    if args.log_level:
        env["VAULT_AGENT_LOG_LEVEL"] = args.log_level
    return env


# ------------------------------------------------------------------ load
@dataclass
class Traffic:
    """Requests and edits so far, and the latencies since the last sample."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    edits: int = 0
    requests: int = 0
    errors: int = 0
    window: dict[str, list[float]] = field(default_factory=dict)
    every: dict[str, list[float]] = field(default_factory=dict)

    def record(self, kind: str, ms: float, ok: bool) -> None:
        with self.lock:
            self.requests += 1
            self.errors += 0 if ok else 1
            self.window.setdefault(kind, []).append(ms)
            self.every.setdefault(kind, []).append(ms)

    def take_window(self) -> dict[str, list[float]]:
        with self.lock:
            out, self.window = self.window, {}
        return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 1) if ordered else 0.0


def _requests(url: str, notes: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """One cycle of the request mix: (kind, route, params)."""
    rng = random.Random(len(notes))
    where = json.dumps([{"field": "status", "op": "=", "value": "active"}])
    return [
        ("search", "/search", {"q": rng.choice(QUERIES)}),
        ("overview", "/overview", {}),
        ("query", "/query", {"tags": "project", "sort": "-mtime", "limit": 20}),
        ("search", "/search", {"q": rng.choice(QUERIES)}),
        ("read", "/read", {"path": rng.choice(notes), "full": "true"}),
        ("query", "/query", {"where": where, "limit": 20}),
    ]


def _client(url: str, notes: list[str], every_s: float, traffic: Traffic, stop: threading.Event) -> None:
    next_at = time.monotonic()
    cycle = 0
    while not stop.is_set():
        for kind, route, params in _requests(url, notes[cycle % len(notes) :] + notes[: cycle % len(notes)]):
            if stop.is_set():
                return
            req = urllib.request.Request(
                f"{url}{route}?{urllib.parse.urlencode(params)}", headers={"Authorization": f"Bearer {TOKEN}"}
            )
            start = time.perf_counter()
            ok = True
            try:
                with urllib.request.urlopen(req, timeout=120) as resp:
                    resp.read()
            except (urllib.error.URLError, OSError):
                ok = False
            traffic.record(kind, (time.perf_counter() - start) * 1000, ok)
            next_at += every_s
            stop.wait(max(0.0, next_at - time.monotonic()))
        cycle += 1


def _editor(vault: Path, notes: list[str], every_s: float, traffic: Traffic, stop: threading.Event) -> None:
    rng = random.Random(1)
    next_at = time.monotonic()
    while not stop.is_set():
        path = vault / rng.choice(notes)
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"\nedit {traffic.edits} {rng.random():.6f}\n")
        traffic.edits += 1
        next_at += every_s
        stop.wait(max(0.0, next_at - time.monotonic()))


# ------------------------------------------------------------------ sampling
class LogTap:
    """Reads serve's stderr (JSON lines): counts request lines and the others by message."""

    def __init__(self, stream: Any) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.other: dict[str, int] = {}
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            try:
                msg = str(json.loads(line).get("msg", ""))
            except ValueError:
                msg = "(not JSON)"
            with self.lock:
                if msg == "request":
                    self.requests += 1
                else:
                    key = msg[:60]
                    self.other[key] = self.other.get(key, 0) + 1

    def take(self) -> tuple[int, dict[str, int]]:
        with self.lock:
            out = (self.requests, self.other)
            self.requests, self.other = 0, {}
        return out


def _sample(
    pid: int, state: Path, started: float, phase: str, traffic: Traffic, logs: LogTap
) -> dict[str, Any]:
    serve = _status(pid)
    kids = {child: (name, _status(child)) for child, name in _children(pid).items()}
    size, files, entries = _dir_stats(state)
    requests, other_logs = logs.take()
    window = traffic.take_window()
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = -1
    return {
        "t_s": round(time.monotonic() - started, 1),
        "phase": phase,
        "serve_mb": _mb(serve.get("VmRSS")),
        "serve_anon_mb": _mb(serve.get("RssAnon")),
        "serve_file_mb": _mb(serve.get("RssFile")),
        "serve_peak_mb": _mb(serve.get("VmHWM")),
        "children": [{"name": name, "pid": child, "mb": _mb(st.get("VmRSS"))} for child, (name, st) in kids.items()],
        "total_mb": round(sum(_mb(st.get("VmRSS", 0)) or 0 for _, st in kids.values()) + (_mb(serve.get("VmRSS", 0)) or 0), 1),
        "fds": fds,
        "threads": serve.get("Threads"),
        "serve_cpu_s": round(_cpu_s(pid), 1),
        "state_mb": round(size / 2**20, 1),
        "state_files": files,
        "state_entries": entries,
        "edits": traffic.edits,
        "requests": traffic.requests,
        "errors": traffic.errors,
        "ms_p50_p99": {k: [_pct(v, 0.5), _pct(v, 0.99)] for k, v in sorted(window.items())},
        "log_requests": requests,
        "log_other": other_logs,
        "load": os.getloadavg()[0],
    }  # fmt: skip


def _slope_per_10min(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MB) in MB per 10 minutes; None with < 3 points."""
    if len(points) < 3:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return (
        round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den * 600, 2) if den else None
    )


def _summary(
    args: argparse.Namespace, rows: list[dict[str, Any]], live: tuple[int, int], traffic: Traffic
) -> dict[str, Any]:
    warm = [r for r in rows if r["phase"] == "edits" and r["t_s"] >= args.warmup_s]
    edits = [r for r in rows if r["phase"] == "edits"]
    tail = [r for r in rows if r["phase"] == "tail"]
    half = [r for r in warm if r["t_s"] >= (warm[0]["t_s"] + warm[-1]["t_s"]) / 2] if warm else []
    kids = [c for r in rows for c in r["children"]]
    minutes = max(1e-9, (rows[-1]["t_s"] if rows else 0) / 60)
    other_logs: dict[str, int] = {}
    for r in rows:
        for k, v in r["log_other"].items():
            other_logs[k] = other_logs.get(k, 0) + v
    return {
        "notes": args.notes,
        "minutes": args.minutes,
        "edit_every_s": args.edit_every,
        "query_every_s": args.query_every,
        "semantic": args.semantic,
        "exe": _exe(args),
        "edits": traffic.edits,
        "requests": traffic.requests,
        "errors": traffic.errors,
        "serve_mb_after_warmup": warm[0]["serve_mb"] if warm else None,
        "serve_mb_max": max((r["serve_mb"] or 0 for r in rows), default=None),
        "serve_mb_last_edits": edits[-1]["serve_mb"] if edits else None,
        "serve_slope_mb_per_10min": _slope_per_10min([(r["t_s"], r["serve_mb"]) for r in half]),
        "total_slope_mb_per_10min": _slope_per_10min([(r["t_s"], r["total_mb"]) for r in half]),
        "slope_window_s": [half[0]["t_s"], half[-1]["t_s"]] if half else None,
        "child_mb_max": {n: max(c["mb"] or 0 for c in kids if c["name"] == n) for n in {c["name"] for c in kids}},
        "children_at_end": rows[-1]["children"] if rows else [],
        "fds_min_max": [min(r["fds"] for r in rows), max(r["fds"] for r in rows)] if rows else None,
        "threads_min_max": [min(r["threads"] or 0 for r in rows), max(r["threads"] or 0 for r in rows)] if rows else None,
        "state_live_at_start": {"mb": round(live[0] / 2**20, 1), "files": live[1]},
        "state_max_during_edits": {"mb": max((r["state_mb"] for r in edits), default=0), "files": max((r["state_files"] for r in edits), default=0)},
        "state_ratio_max": {
            "bytes": round(max((r["state_mb"] for r in edits), default=0) / max(live[0] / 2**20, 1e-9), 2),
            "files": round(max((r["state_files"] for r in edits), default=0) / max(live[1], 1), 2),
        },
        "state_at_end": {"mb": rows[-1]["state_mb"], "files": rows[-1]["state_files"]} if rows else None,
        # Settled: the last sample of the tail, once the writer compacted and collected
        # after the edits stopped (issue 32 compares the edits with this, "after a compaction").
        "state_ratio_vs_settled": {
            "bytes": round(max((r["state_mb"] for r in edits), default=0) / max(tail[-1]["state_mb"], 1e-9), 2),
            "files": round(max((r["state_files"] for r in edits), default=0) / max(tail[-1]["state_files"], 1), 2),
            "entries": round(max((r["state_entries"] for r in edits), default=0) / max(tail[-1]["state_entries"], 1), 2),
        } if tail else None,
        "tail_samples": len(tail),
        "log_lines_per_min_besides_requests": round(sum(other_logs.values()) / minutes, 2),
        "log_other": other_logs,
        "ms_p50_p99": {k: [_pct(v, 0.5), _pct(v, 0.99)] for k, v in sorted(traffic.every.items())},
    }  # fmt: skip


# ------------------------------------------------------------------ run
def _measure(args: argparse.Namespace, work: Path) -> None:
    base = _base(args, work)
    run = work / f"run-{os.getpid()}"  # runs side by side in one --workdir share only the base
    subprocess.run(["cp", "-a", str(base), str(run)], check=True)  # -a keeps the engine's hard links
    vault, state = run / "vault", run / "state"
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    cmd = [_exe(args), "serve", "--watch", "--vault", str(vault), "--index-dir", str(state), "--port", "0"]
    proc = subprocess.Popen(cmd, env=_env(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop, edits_stop = threading.Event(), threading.Event()
    traffic = Traffic()
    rows: list[dict[str, Any]] = []
    try:
        assert proc.stdout is not None and proc.stderr is not None
        logs = LogTap(proc.stderr)
        match = re.search(r"http://[^\s]+", proc.stdout.readline())
        if match is None:
            raise SystemExit("serve did not start")
        url = match.group(0)
        started = time.monotonic()
        live = _live_set(state)
        benchkit.report(
            {
                "setup": "serve",
                "pid": proc.pid,
                "live_set_mb": round(live[0] / 2**20, 1),
                "live_set_files": live[1],
            }
        )
        threads = [
            threading.Thread(target=_client, args=(url, notes, args.query_every, traffic, stop), daemon=True),
            threading.Thread(target=_editor, args=(vault, notes, args.edit_every, traffic, edits_stop), daemon=True),
        ]  # fmt: skip
        for t in threads:
            t.start()
        phase_end = started + args.minutes * 60
        phase = "edits"
        while True:
            now = time.monotonic()
            if phase == "edits" and now >= phase_end:
                edits_stop.set()
                phase, phase_end = "tail", now + args.tail_s
            if phase == "tail" and now >= phase_end:
                break
            time.sleep(max(0.0, min(args.sample_s, phase_end - now)))
            row = _sample(proc.pid, state, started, phase, traffic, logs)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if proc.poll() is not None:
                raise SystemExit(f"serve exited with {proc.returncode}")
    finally:
        stop.set()
        edits_stop.set()
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    benchkit.report({"summary": _summary(args, rows, live, traffic)})


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--minutes", type=float, default=60.0, help="of edits and queries")
    ap.add_argument("--warmup-s", type=float, default=180.0, help="first samples left out of the slope")
    ap.add_argument(
        "--tail-s",
        type=float,
        default=0.0,
        help="queries only, after the edits (360: the worker's idle exit)",
    )
    ap.add_argument("--edit-every", type=float, default=0.5)
    ap.add_argument("--query-every", type=float, default=0.5)
    ap.add_argument("--sample-s", type=float, default=60.0)
    ap.add_argument("--semantic", choices=["on", "off"], default="on")
    ap.add_argument(
        "--fake-embed",
        action="store_true",
        help="embed the base with random vectors (bench_semantic_scale.py) instead of the model: 100k in minutes",
    )
    ap.add_argument("--log-level", default=None, help="serve's VAULT_AGENT_LOG_LEVEL (default: its own)")
    ap.add_argument("--exe", type=Path, default=None, help="another checkout's vault-agent (side by side)")
    ap.add_argument("--workdir", type=Path, default=None, help="kept: the indexed base is reused")
    args = benchkit.parse(
        ap,
        smoke={
            "notes": 30,
            "minutes": 0.1,
            "warmup_s": 0.0,
            "tail_s": 2.0,
            "sample_s": 2.0,
            "semantic": "off",
        },
        argv=argv,
    )
    if args.workdir is None and not args.smoke:
        args.workdir = Path(tempfile.gettempdir()) / "va-longrun"
    with benchkit.workdir("longrun", keep=None if args.smoke else args.workdir) as work:
        benchkit.report({"start": "longrun", "notes": args.notes, "minutes": args.minutes})
        try:
            _measure(args, work)
        finally:
            shutil.rmtree(work / f"run-{os.getpid()}", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
