#!/usr/bin/env python3
"""Wall time of CLI commands against a running server (what a person waits for at the prompt).

    python ops/gen_vault.py /tmp/v10k --notes 10000 --seed 1
    python ops/bench/bench_cli.py /tmp/v10k [--index-dir DIR] [--runs 10] [--word project]
        [--baseline /other/venv/bin/vault-agent] [--wheel] [--baseline-tree /other/checkout]

Builds the index when the state dir has none, starts the real server (`vault-agent serve
--port 0`, no watcher) as a child process, then runs each command `--runs` times as a fresh
process, as a user types it: `--version`, `--help`, `search --help`, `overview`,
`search WORD`. Variants run interleaved, command by command, so that the machine's load
hits them alike:

- `editable`: this venv's `vault-agent` (an editable install of this tree);
- `before`: `--baseline SCRIPT`, e.g. the console script of another checkout's venv;
- `wheel` (with `--wheel`): a wheel of this tree's tracked files installed into a temporary
  venv, as a user installs it (no editable-install finder in `site`); its dependencies come
  from this venv through a .pth line, so nothing is downloaded but the build backend;
- `wheel_before` (with `--wheel --baseline-tree DIR`): the same for another checkout.

Timed processes run without PYTHONDONTWRITEBYTECODE (a user's shell does not set it), so the
first, untimed round writes the bytecode caches as a first real run would. Reports per
command and variant the median and min wall ms and the median CPU ms (user + system of the
process: what it costs, whatever the queue for a core), the machine load (`uptime`) before
and after, as a table and one JSON line.
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
import sysconfig
import tempfile
import time
from pathlib import Path

import benchkit
from bench_http import ROOT, VAULT_AGENT


def time_once(argv: list[str], env: dict[str, str]) -> tuple[float, float] | None:
    """Wall ms and CPU ms (user + system) of one run; None when the command fails.

    On a loaded machine the wall time mostly measures the queue for a core; the CPU time of
    the process is what the command itself costs.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # cwd outside any source tree: `python -c` puts the cwd first on sys.path.
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return (elapsed, cpu) if done.returncode == 0 else None


def summary(times: list[tuple[float, float] | None]) -> dict[str, float | None]:
    ok = [t for t in times if t is not None]
    if len(ok) < len(times):
        return {"median_ms": None, "min_ms": None, "cpu_median_ms": None}
    walls = [wall for wall, _ in ok]
    return {
        "median_ms": round(statistics.median(walls), 1),
        "min_ms": round(min(walls), 1),
        "cpu_median_ms": round(statistics.median(cpu for _, cpu in ok), 1),
    }


def ensure_index(vault: Path, env: dict[str, str]) -> None:
    """`vault-agent index` when the state dir has no committed snapshot yet."""
    index_dir = Path(env.get("VAULT_AGENT_INDEX_DIR") or vault / ".vault-agent")
    if not (index_dir / "CURRENT").exists():
        subprocess.run([VAULT_AGENT, "index", "--vault", str(vault)], env=env, check=True)


def wheel_install(tree: Path, work: Path) -> str:
    """Install a wheel of `tree`'s tracked files into a new venv under `work`; its console script."""
    src = work / "src"
    files = (
        subprocess.run(["git", "-C", str(tree), "ls-files", "-z"], capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        if (tree / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(tree / rel, src / rel)
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", str(src), "-w", str(work / "dist")], check=True)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheel = next((work / "dist").glob("vault_agent-*.whl"))
    subprocess.run([*pip, "--python", str(python), "install", "-q", "--no-deps", str(wheel)], check=True)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies: this venv's site-packages as a plain path (its .pth files, among
    # them our editable finder, are not processed from there).
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return str(venv / "bin" / "vault-agent")


def _time_commands(variants: dict[str, str], word: str, runs: int, env: dict[str, str]) -> dict[str, object]:
    """Each command under each variant, side by side, `runs` times after one warm-up round."""
    commands = {
        "version": ["--version"],
        "help": ["--help"],
        "search_help": ["search", "--help"],
        "overview": ["overview"],
        "search": ["search", word],
    }
    result: dict[str, object] = {}
    for name, rest in commands.items():
        times: dict[str, list[tuple[float, float] | None]] = {variant: [] for variant in variants}
        for i in range(runs + 1):
            for variant, script in variants.items():
                elapsed = time_once([script, *rest], env)
                if i:  # the first round writes bytecode caches and warms the page cache
                    times[variant].append(elapsed)
        for variant, values in times.items():
            for stat, ms in summary(values).items():
                result[f"{name}_{variant}_{stat}"] = ms
    return result


def main() -> int:
    parser = benchkit.parser(__doc__)
    parser.add_argument("vault", type=Path, nargs="?")
    parser.add_argument("--index-dir", type=Path, help="state dir (default <vault>/.vault-agent)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--word", default="project")
    parser.add_argument("--baseline", help="another vault-agent console script to time alongside")
    parser.add_argument("--wheel", action="store_true", help="also time a wheel install of this tree")
    parser.add_argument("--baseline-tree", type=Path, help="with --wheel: also a wheel of this checkout")
    args = benchkit.parse(parser, smoke={"runs": 1})
    with benchkit.workdir("cli-vault") as made:
        benchkit.inputs_or_smoke(parser, args, made, "vault", indexed=False)
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    vault = args.vault.resolve()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VAULT_AGENT_") and k != "PYTHONDONTWRITEBYTECODE"
    } | {"VAULT_AGENT_LOG_LEVEL": "WARNING"}
    if args.index_dir:
        env["VAULT_AGENT_INDEX_DIR"] = str(args.index_dir.resolve())
    ensure_index(vault, env)
    variants = {"editable": VAULT_AGENT}
    if args.baseline:
        variants["before"] = args.baseline
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    result: dict[str, object] = {}
    proc = None
    try:
        if args.wheel:
            variants["wheel"] = wheel_install(ROOT, work / "now")
            if args.baseline_tree:
                variants["wheel_before"] = wheel_install(args.baseline_tree.resolve(), work / "before")
        proc = subprocess.Popen(
            [VAULT_AGENT, "serve", "--vault", str(vault), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("listening on ")
        env |= {"VAULT_AGENT_SERVER": url, "VAULT_AGENT_VAULT": str(vault)}
        result["load_before"] = benchkit.load_line()
        result |= _time_commands(variants, args.word, args.runs, env)
        result["load_after"] = benchkit.load_line()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    result["runs"] = args.runs
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key.ljust(width)}  {value}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
