"""`related` at scale: this checkout beside main's and the exact term pool's, in one run.

    V=/tmp/v100k S=/tmp/state100k     # gen_vault.py V --notes 100000; vault-agent index
    nice .venv/bin/python ops/bench/bench_related.py --vault $V --state $S --sample 300 --runs 3 \
        --main-repo /work/main [--main-state S_MAIN] [--exact-ref REF] --port 18450

Sides: `main` (--main-repo with its own .venv, over --main-state when its index format
differs, else --state), `exact` (the git ref --exact-ref of this repository, exported to a
temporary dir and run with this checkout's .venv over --state: the last `related` that
scored term overlap with exact BM25 over every posting; --exact-ref '' leaves it out) and
`branch` (this checkout). In process: one worker process per side (`related_worker.py`,
importing that side's own `vault_agent`, one `SnapshotReader`), answering the same sample
of notes (every k-th note path of the vault, path order) in turn per note, the order
rotating per run, --runs times. Per side: the first call (it builds the per-reader layouts),
then p50/p90 of wall and process CPU time (DuckDB threads included) over the warm calls.
Against the exact side: answers equal byte for byte, and the mean Jaccard of the top 10
paths, of the whole answer and of the term-overlap notes alone (each side's own term pool
for the same terms, computed untimed in the first run). Over HTTP (unless
--in-process-only): `vault-agent serve` of main's checkout and of this one in turn (port
--port, then +1), one warm-up request, then GET /related for the sample: p50/p90.
Prints JSON with the load average before and after each part. --smoke: this tree against
itself on a small generated vault, in process only.
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
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import benchkit  # noqa: E402  (ops/bench: the script's own directory)

from vault_agent.config import Settings  # noqa: E402


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def sample(vault: Path, count: int) -> list[str]:
    paths = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    step = max(1, len(paths) // count)
    return paths[::step][:count]


class Worker:
    """A `related_worker.py` process of one checkout."""

    def __init__(self, repo: Path, python: Path, vault: Path, state: Path) -> None:
        cmd = [str(python), str(REPO / "ops/bench/related_worker.py"),
               "--repo", str(repo), "--vault", str(vault), "--state", str(state)]  # fmt: skip
        env = {**os.environ, "VAULT_AGENT_SEMANTIC": "off"}
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, note: str, terms: bool) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{note}\t{int(terms)}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited with {self.proc.wait()}")
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


def jaccard(a: list[str], b: list[str]) -> float:
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else 1.0


Side = tuple[Path, Path, Path]  # (source tree, python, state dir)


def exact_tree(ref: str) -> Path:
    """The ref's source tree, exported to a temporary dir (run with this checkout's .venv)."""
    out = Path(tempfile.mkdtemp(prefix="related-exact-"))
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "vault_agent"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def in_process(sides: dict[str, Side], vault: Path, notes: list[str], runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {"load_before": load()}
    workers = {name: Worker(repo, python, vault, state) for name, (repo, python, state) in sides.items()}
    stats: dict[str, dict[str, list[float]]] = {k: {"wall_ms": [], "cpu_ms": []} for k in workers}
    answers: dict[str, dict[str, Any]] = {k: {} for k in workers}
    names = list(workers)
    try:
        for name, worker in workers.items():
            first = worker.ask(notes[0], False)
            out[f"{name}_first_call_ms"] = {
                "wall": round(first["wall_ms"], 1),
                "cpu": round(first["cpu_ms"], 1),
            }
        for run in range(runs):
            for i, note in enumerate(notes):
                turn = (run + i) % len(names)
                for name in names[turn:] + names[:turn]:
                    reply = workers[name].ask(note, run == 0 and name != "main")
                    stats[name]["wall_ms"].append(reply["wall_ms"])
                    stats[name]["cpu_ms"].append(reply["cpu_ms"])
                    answers[name].setdefault(note, reply)
    finally:
        for worker in workers.values():
            worker.close()
    for name in workers:
        out[name] = {
            k: {"p50": _pct(v, 0.5), "p90": _pct(v, 0.9), "mean": round(statistics.fmean(v), 2)}
            for k, v in stats[name].items()
        }
        out[f"ratio_p50_cpu_{name}_to_main"] = round(
            out[name]["cpu_ms"]["p50"] / out["main"]["cpu_ms"]["p50"], 4
        )
    if "exact" in answers:
        exact = answers["exact"]
        for name in (n for n in names if n != "exact"):
            mine = answers[name]
            same = sum(mine[n]["answer"] == exact[n]["answer"] for n in notes)
            paths = [
                (
                    [r["path"] for r in mine[n]["answer"]["related"]],
                    [r["path"] for r in exact[n]["answer"]["related"]],
                )
                for n in notes
            ]
            out[f"{name}_vs_exact"] = {
                "answers_equal": f"{same}/{len(notes)}",
                "top10_jaccard_mean": round(statistics.fmean(jaccard(a, b) for a, b in paths), 3),
            }
        out["branch_vs_exact"]["term_top10_jaccard_mean"] = round(
            statistics.fmean(
                jaccard(answers["branch"][n]["terms_top10"], exact[n]["terms_top10"]) for n in notes
            ),
            3,
        )
    out["load_after"] = load()
    return out


def _serve(repo: Path, settings: Settings, port: int, notes: list[str]) -> dict[str, Any]:
    token = "bench-related"
    env = {**os.environ, "VAULT_AGENT_TOKEN": token, "VAULT_AGENT_SEMANTIC": "off"}
    cmd = [str(repo / ".venv/bin/vault-agent"), "serve", "--vault", str(settings.vault),
           "--index-dir", str(settings.index_dir), "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=env, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]

        def get(note: str) -> tuple[float, str]:
            req = urllib.request.Request(
                f"{url}/related?{urllib.parse.urlencode({'path': note, 'limit': 10})}",
                headers={"Authorization": f"Bearer {token}"},
            )
            t = time.perf_counter()
            with urllib.request.urlopen(req, timeout=1200) as r:
                body = r.read().decode("utf-8")
            return (time.perf_counter() - t) * 1000, body

        first, _ = get(notes[0])
        timed = [get(n) for n in notes]
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    ms = [t for t, _ in timed]
    return {"first_ms": round(first, 1), "p50_ms": _pct(ms, 0.5), "p90_ms": _pct(ms, 0.9)}


def over_http(sides: dict[str, Side], vault: Path, notes: list[str], port: int) -> dict[str, Any]:
    out: dict[str, Any] = {"load_before": load()}
    for offset, name in enumerate(("main", "branch")):
        repo, _python, state = sides[name]
        out[name] = _serve(repo, Settings(vault=vault, index_dir=state), port + offset, notes)
    out["load_after"] = load()
    return out


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--state", type=Path)
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--main-repo", type=Path, help="a checkout of main with its .venv")
    ap.add_argument("--main-state", type=Path, help="main's index of the same vault (default: --state)")
    ap.add_argument(
        "--exact-ref", default="int", help="the ref whose related scores term overlap exactly ('': none)"
    )
    ap.add_argument("--port", type=int, default=18450)
    ap.add_argument("--http-only", action="store_true", help="skip the in-process comparison")
    ap.add_argument("--in-process-only", action="store_true", help="skip the HTTP comparison")
    args = benchkit.parse(
        ap, smoke={"sample": 3, "runs": 1, "main_repo": REPO, "exact_ref": "", "in_process_only": True}
    )
    with benchkit.workdir("bench-related") as work:
        benchkit.inputs_or_smoke(ap, args, work, state="state")
        if args.main_repo is None:
            ap.error("required: --main-repo")
        run(args)


def run(args: argparse.Namespace) -> None:
    python = Path(sys.executable) if args.smoke else REPO / ".venv/bin/python"
    sides: dict[str, Side] = {
        "main": (args.main_repo, args.main_repo / ".venv/bin/python", args.main_state or args.state)
    }
    if args.exact_ref:
        sides["exact"] = (exact_tree(args.exact_ref), python, args.state)
    sides["branch"] = (REPO, python, args.state)
    notes = sample(args.vault, args.sample)
    result: dict[str, Any] = {"notes": len(notes)}
    if not args.http_only:
        result["in_process"] = in_process(sides, args.vault, notes, args.runs)
        print(json.dumps(result, indent=1), flush=True)
    if not args.in_process_only:
        result["http"] = over_http(sides, args.vault, notes, args.port)
        print(json.dumps({"http": result["http"]}, indent=1), flush=True)


if __name__ == "__main__":
    main()
