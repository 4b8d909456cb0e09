#!/usr/bin/env python3
"""Wall time of server-backed CLI commands (what a person waits for at the prompt).

    python ops/gen_vault.py /tmp/v10k --notes 10000 --seed 1
    python ops/bench/bench_cli.py /tmp/v10k [--runs 10] [--word project] [--baseline-src DIR]

Builds the index when the vault has none, starts the real server (`vault-agent serve
--port 0`, no watcher) as a child process, then runs each command `--runs` times as a
fresh process (the installed `vault-agent` console script, as a user types it):
`--version`, `--help`, `overview`, `search WORD`. Reports the median and min wall time
in ms per command, the machine load (`uptime`), as a table and one JSON line.
With `--baseline-src DIR` (an exported older tree, e.g. `git archive main vault_agent | tar
-x -C DIR`), the same commands of that tree run interleaved with these, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import VAULT_AGENT, ensure_index  # noqa: E402


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def time_once(argv: list[str], env: dict[str, str]) -> float | None:
    """Wall ms of one run; None when the command fails (e.g. an option the tree lacks)."""
    start = time.perf_counter()
    # cwd outside any source tree: `python -c` puts the cwd first on sys.path.
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed if done.returncode == 0 else None


def summary(times: list[float | None]) -> dict[str, float | None]:
    ok = [t for t in times if t is not None]
    if len(ok) < len(times):
        return {"median_ms": None, "min_ms": None}
    return {"median_ms": round(statistics.median(ok), 1), "min_ms": round(min(ok), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("vault", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--word", default="project")
    parser.add_argument("--baseline-src", type=Path, help="another source tree to time alongside")
    args = parser.parse_args()
    vault = args.vault.resolve()
    ensure_index(vault)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")} | {
        "VAULT_AGENT_LOG_LEVEL": "WARNING"
    }
    proc = subprocess.Popen(
        [VAULT_AGENT, "serve", "--vault", str(vault), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    result: dict[str, object] = {"load_before": load()}
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("listening on ")
        env |= {"VAULT_AGENT_SERVER": url, "VAULT_AGENT_VAULT": str(vault)}
        cli = [sys.executable, "-c", "from vault_agent.cli.main import run; run()"]
        variants = {"": (VAULT_AGENT, env)}
        if args.baseline_src:
            variants["baseline_"] = ("", env | {"PYTHONPATH": str(args.baseline_src.resolve())})
        commands = {
            "version": ["--version"],
            "help": ["--help"],
            "overview": ["overview"],
            "search": ["search", args.word],
        }
        for name, rest in commands.items():
            times: dict[str, list[float | None]] = {prefix: [] for prefix in variants}
            for i in range(args.runs + 1):
                for prefix, (script, var_env) in variants.items():
                    argv = ([script] if script else cli) + rest
                    elapsed = time_once(argv, var_env)
                    if i:  # the first round warms the page cache
                        times[prefix].append(elapsed)
            for prefix, values in times.items():
                for key, value in summary(values).items():
                    result[f"{prefix}{name}_{key}"] = value
    finally:
        proc.terminate()
        proc.wait(60)
    result["load_after"] = load()
    result["runs"] = args.runs
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key.ljust(width)}  {value}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
