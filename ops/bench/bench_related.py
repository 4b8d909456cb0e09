"""`related` at scale: this checkout beside main's `related`, in one run, answers compared.

    V=/tmp/v100k S=/tmp/state100k     # gen_vault.py V --notes 100000; vault-agent index
    nice .venv/bin/python ops/bench/bench_related.py --vault $V --state $S --sample 300 --runs 3 \
        --main-repo /work/main --port 18450

In process: one `SnapshotReader` over the state; main's `vault_agent/query/related.py`
(from `git show <main-ref>:…`, loaded beside this checkout's modules, which it only calls
through APIs this branch keeps) and this checkout's `related` answer the same sample of
notes (every k-th note path of the vault, path order), alternating per note, --runs times.
Per implementation: the first call (it builds the per-snapshot layouts), then p50/p90 of
wall and process CPU time (DuckDB threads included) over the warm calls, and whether every
answer equals main's byte for byte (JSON). Over HTTP (--main-repo): `vault-agent serve`
of main's checkout and of this one in turn on the same state (port --port, then +1), one
warm-up request, then GET /related for the sample: p50/p90 and the bodies compared.
Prints JSON with the load average before and after each part.
"""

from __future__ import annotations

import argparse
import importlib.util
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

from vault_agent.api.registry import make_vault  # noqa: E402
from vault_agent.config import Settings  # noqa: E402
from vault_agent.query import related as new_related  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def _main_module(ref: str) -> Any:
    """main's related.py as a module of its own (it imports this checkout's query modules)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{ref}:vault_agent/query/related.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    tmp = Path(tempfile.mkdtemp()) / "related_main.py"
    tmp.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("related_main", tmp)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["related_main"] = module  # pydantic resolves the models' annotations there
    spec.loader.exec_module(module)
    return module


def sample(vault: Path, count: int) -> list[str]:
    paths = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    step = max(1, len(paths) // count)
    return paths[::step][:count]


def in_process(settings: Settings, notes: list[str], runs: int, ref: str) -> dict[str, Any]:
    impls = {"main": _main_module(ref), "branch": new_related}
    out: dict[str, Any] = {"load_before": load()}
    stats: dict[str, dict[str, list[float]]] = {k: {"wall_ms": [], "cpu_ms": []} for k in impls}
    answers: dict[str, dict[str, str]] = {k: {} for k in impls}
    for name, module in impls.items():  # a fresh reader and cache each: the first call builds
        reader = SnapshotReader(settings, make_vault(settings), freshness=lambda _m: "fresh")
        cache: dict[Any, Any] = {}
        t, c = time.perf_counter(), time.process_time()
        module.related(reader, notes[0], 10, cache)
        out[f"{name}_first_call_ms"] = {
            "wall": round((time.perf_counter() - t) * 1000, 1),
            "cpu": round((time.process_time() - c) * 1000, 1),
        }
        impls[name] = (module, reader, cache)  # type: ignore[assignment]
    for run in range(runs):
        for note in notes:
            order = list(impls.items()) if run % 2 == 0 else list(impls.items())[::-1]
            for name, (module, reader, cache) in order:  # type: ignore[misc]
                t, c = time.perf_counter(), time.process_time()
                data = module.related(reader, note, 10, cache).data
                stats[name]["wall_ms"].append((time.perf_counter() - t) * 1000)
                stats[name]["cpu_ms"].append((time.process_time() - c) * 1000)
                answers[name].setdefault(note, data.model_dump_json(by_alias=True))
    for name, (_module, reader, _cache) in impls.items():  # type: ignore[misc]
        reader.close()
        out[name] = {k: {"p50": _pct(v, 0.5), "p90": _pct(v, 0.9), "mean": round(statistics.fmean(v), 2)} for k, v in stats[name].items()}
    differ = [n for n in notes if answers["main"][n] != answers["branch"][n]]
    out["answers_equal"] = f"{len(notes) - len(differ)}/{len(notes)}"
    out["differ"] = differ[:10]
    out["ratio_p50_wall"] = round(out["branch"]["wall_ms"]["p50"] / out["main"]["wall_ms"]["p50"], 4)
    out["load_after"] = load()
    return out


def _serve(repo: Path, settings: Settings, port: int, notes: list[str]) -> dict[str, Any]:
    token = "bench-related"
    env = {**os.environ, "VAULT_AGENT_TOKEN": token, "VAULT_AGENT_SEMANTIC": "off"}
    cmd = [str(repo / ".venv/bin/vault-agent"), "serve", "--vault", str(settings.vault),
           "--index-dir", str(settings.index_dir), "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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
    return {"first_ms": round(first, 1), "p50_ms": _pct(ms, 0.5), "p90_ms": _pct(ms, 0.9),
            "bodies": {n: b for n, (_, b) in zip(notes, timed, strict=True)}}  # fmt: skip


def over_http(settings: Settings, notes: list[str], main_repo: Path, port: int) -> dict[str, Any]:
    out: dict[str, Any] = {"load_before": load()}
    for offset, (name, repo) in enumerate((("main", main_repo), ("branch", REPO))):
        out[name] = _serve(repo, settings, port + offset, notes)
    differ = [n for n in notes if out["main"]["bodies"][n] != out["branch"]["bodies"][n]]
    for name in ("main", "branch"):
        out[name].pop("bodies")
    out["answers_equal"] = f"{len(notes) - len(differ)}/{len(notes)}"
    out["differ"] = differ[:10]
    out["load_after"] = load()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--main-ref", default="main")
    ap.add_argument("--main-repo", type=Path, help="a checkout of main with its .venv (HTTP side by side)")
    ap.add_argument("--port", type=int, default=18450)
    ap.add_argument("--http-only", action="store_true", help="skip the in-process comparison")
    args = ap.parse_args()
    settings = Settings(vault=args.vault, index_dir=args.state)
    notes = sample(args.vault, args.sample)
    result: dict[str, Any] = {"notes": len(notes)}
    if not args.http_only:
        result["in_process"] = in_process(settings, notes, args.runs, args.main_ref)
        print(json.dumps(result, indent=1), flush=True)
    if args.main_repo is not None:
        result["http"] = over_http(settings, notes, args.main_repo, args.port)
        print(json.dumps({"http": result["http"]}, indent=1), flush=True)


if __name__ == "__main__":
    main()
