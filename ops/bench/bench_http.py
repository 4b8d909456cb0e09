#!/usr/bin/env python3
"""HTTP latency and throughput of `vault-agent serve` on loopback.

    python ops/gen_vault.py /tmp/v100k --notes 100000 --seed 1
    python ops/bench/bench_http.py /tmp/v100k [--runs 3] [--requests 200] [--seconds 10]
        [--state DIR]   # an existing state dir outside the vault (VAULT_AGENT_INDEX_DIR)

Builds the index when the vault has none, starts the real server (`vault-agent serve
--port 0`, no watcher) as a child process, waits for a fresh index, then per run:
- latency: `--requests` sequential requests per route after a warm-up; p50/p99 in ms for
  overview, tree, tags, facets and get_note_outline (paths sampled from the vault);
- throughput: 8 concurrent keep-alive clients cycling overview/tree/tags/facets for
  `--seconds`; requests per second.
Reports the median over runs, as a table and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import benchkit

ROOT = Path(__file__).resolve().parents[2]
VAULT_AGENT = str(Path(sys.executable).parent / "vault-agent")
ORIENTATION = ["/overview", "/tree", "/tags", "/facets"]


def ensure_index(vault: Path, state: Path | None = None) -> float | None:
    """Build the index when missing; returns the build time in seconds (None when present)."""
    if ((state or vault / ".vault-agent") / "CURRENT").exists():
        return None
    sys.path.insert(0, str(ROOT))
    from vault_agent.config import load_settings
    from vault_agent.indexer.build import build_index

    start = time.perf_counter()
    build_index(load_settings({"vault": vault}, env={}), full=True)
    return time.perf_counter() - start


def sample_notes(vault: Path, count: int, seed: int = 1) -> list[str]:
    paths: list[str] = []
    for dirpath, dirnames, filenames in os.walk(vault):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        paths += [str(Path(dirpath, f).relative_to(vault)) for f in sorted(filenames) if f.endswith(".md")]
    random.Random(seed).shuffle(paths)
    return paths[:count]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def latency(
    session: aiohttp.ClientSession, url: str, paths: list[str], n: int
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    routes = {r.strip("/"): [r] * n for r in ORIENTATION}
    routes["get_note_outline"] = [
        f"/note-outline?path={p}" for p in (paths * (n // max(1, len(paths)) + 1))[:n]
    ]
    for name, targets in routes.items():
        for target in targets[:20]:  # warm-up
            async with session.get(url + target) as resp:
                await resp.read()
        times = []
        for target in targets:
            start = time.perf_counter()
            async with session.get(url + target) as resp:
                await resp.read()
                if resp.status != 200:
                    raise SystemExit(f"{target}: HTTP {resp.status}")
            times.append((time.perf_counter() - start) * 1000)
        out[name] = times
    return out


async def throughput(url: str, token: str, seconds: float, clients: int = 8) -> float:
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.perf_counter() + seconds
    counts = [0] * clients

    async def client(i: int) -> None:
        async with aiohttp.ClientSession(headers=headers) as session:
            k = i
            while time.perf_counter() < deadline:
                async with session.get(url + ORIENTATION[k % len(ORIENTATION)]) as resp:
                    await resp.read()
                counts[i] += 1
                k += 1

    start = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return sum(counts) / (time.perf_counter() - start)


async def wait_fresh(url: str, token: str, timeout: float = 600) -> None:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            async with session.get(url + "/status") as resp:
                body = await resp.json()
            if body.get("data", {}).get("indexFreshness") == "fresh":
                return
            await asyncio.sleep(0.5)
    raise SystemExit("index did not become fresh")


async def bench(
    url: str, token: str, paths: list[str], runs: int, n: int, seconds: float
) -> dict[str, object]:
    await wait_fresh(url, token)
    per_run: list[dict[str, float]] = []
    for _ in range(runs):
        row: dict[str, float] = {}
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
            for name, times in (await latency(session, url, paths, n)).items():
                row[f"{name}_p50_ms"] = pct(times, 0.50)
                row[f"{name}_p99_ms"] = pct(times, 0.99)
        row["orientation_rps_8_clients"] = await throughput(url, token, seconds)
        per_run.append(row)
    out: dict[str, object] = {key: round(statistics.median(r[key] for r in per_run), 2) for key in per_run[0]}
    return out | {"runs": runs}


def main() -> int:
    parser = benchkit.parser(__doc__)
    parser.add_argument("vault", type=Path, nargs="?")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--state", type=Path, default=None, help="state dir of an existing index")
    args = benchkit.parse(parser, smoke={"runs": 1, "requests": 3, "seconds": 1.0})
    with benchkit.workdir("http") as work:
        benchkit.inputs_or_smoke(parser, args, work, "vault", notes=20, indexed=False)
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    vault = args.vault.resolve()
    build_s = ensure_index(vault, args.state)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")} | {
        "VAULT_AGENT_LOG_LEVEL": "WARNING"
    }
    if args.state is not None:
        env["VAULT_AGENT_INDEX_DIR"] = str(args.state.resolve())
    print(json.dumps({"uptime_start": benchkit.load_line()}), file=sys.stderr)
    proc = subprocess.Popen(
        [VAULT_AGENT, "serve", "--vault", str(vault), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("listening on ")
        token = ((args.state or vault / ".vault-agent") / "token").read_text().strip()
        result = asyncio.run(
            bench(url, token, sample_notes(vault, 200), args.runs, args.requests, args.seconds)
        )
    finally:
        proc.terminate()
        proc.wait(60)
    result["index_build_s"] = round(build_s, 1) if build_s is not None else None
    result["uptime_end"] = benchkit.load_line()
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key.ljust(width)}  {value}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
