"""Memory of `vault-agent serve` at 100k: peak and current RSS after a fixed request mix,
with a breakdown per step (anonymous vs file-backed pages, the largest mappings).

    S=/work/bench-data/state-memory-100k   # a copied (cp -a) state, fake-embedded:
    #   .venv/bin/python ops/bench/bench_semantic_scale.py fake-embed --state $S --vault V
    nice -n 5 .venv/bin/python ops/bench/bench_serve_memory.py --state $S \
        --vault /work/bench-data/v100k --repo /work/main --repo . --rounds 2

Each --repo is a checkout with its own .venv (or a source tree, e.g. `git archive main`,
run by this interpreter with it first on PYTHONPATH); give one --state per --repo when their
index schemas differ (vault_query's schema 4 against main's 3: each indexes the vault with
its own code). The servers run one after the other on the same state and vault (serve does not write notes; it takes the writer lock of the state,
so never point it at a shared original state), alternating repos per round. VmHWM is the
kernel's peak resident set: anonymous memory plus every file page the process touched
through a mapping (tantivy's mmap'd index, the model file), which is what the 1 GiB
target of issue 11 counts. Prints JSON with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import benchkit

QUERIES = [
    "how do I keep notes in sync across devices",
    "quarterly planning meeting notes",
    "what did we decide about the storage layer",
    "ideas for improving search ranking",
    "pipeline",
    "customer feedback on the dashboard",
    "如何在手机上同步笔记",
    "migration checklist for the new schema",
]


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def mix(vault: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """The fixed request mix: (step name, route, params); first one of each kind, then more."""
    notes = sorted(p.relative_to(vault).as_posix() for p in (vault / "projects").glob("*.md"))[:5]
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("overview", "/overview", {}),
        ("tree", "/tree", {}),
        ("tags", "/tags", {}),
        ("facets", "/facets", {}),
        ("search_lexical", "/search", {"q": QUERIES[0], "mode": "lexical"}),
        ("search_hybrid", "/search", {"q": QUERIES[1], "mode": "hybrid"}),
        ("outline", "/note-outline", {"path": notes[0]}),
        ("note", "/note", {"path": notes[1]}),
        ("find", "/find", {"query": "storage layer decision"}),
        ("grep", "/grep", {"query": "pipeline", "mode": "plain", "limit": 20}),
        # vault_query (issue 21; a checkout without it answers 404 and the steps are skipped)
        ("query_tag", "/query", {"tags": "project", "sort": "-mtime"}),
        (
            "query_props",
            "/query",
            {
                "where": json.dumps(
                    [
                        {"field": "status", "op": "=", "value": "active"},
                        {"field": "priority", "op": ">=", "value": 3},
                    ]
                ),
                "select": "due",
                "sort": "-priority",
                "limit": 200,
            },
        ),  # fmt: skip
        (
            "query_dql",
            "/query",
            {"dql": 'TABLE priority, due FROM #review OR "projects" WHERE !done SORT due DESC'},
        ),
        ("query_all_sorted", "/query", {"sort": "-priority", "limit": 500, "select": "priority"}),
        ("related", "/related", {"path": notes[2]}),  # issue 21: its links and term layouts
    ]
    for q in QUERIES * 2:
        steps.append(("more_search", "/search", {"q": q}))
    for p in notes:
        steps.append(("more_outline", "/note-outline", {"path": p}))
        steps.append(("more_related", "/related", {"path": p}))
    return steps


def smaps(pid: int, top: int = 8) -> dict[str, Any]:
    """Rss split by mapping kind, and the largest mappings (by resident kB)."""
    per: dict[str, int] = {}
    anon = file = 0
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            name = head[5] if len(head) > 5 else "[anon]"
            if "/segments/" in name or "/search/" in name:
                name = re.sub(r"/.*/(segments|search)/.*?([^/.]+)$", r"<state>/\1/*.\2", name)
            elif name.startswith("/"):
                name = name.rsplit("/", 1)[-1]
        elif head[0] == "Rss:":
            per[name] = per.get(name, 0) + int(head[1])
        elif head[0] == "Anonymous:":
            anon += int(head[1])
    total = sum(per.values())
    file = total - anon
    biggest = sorted(per.items(), key=lambda kv: -kv[1])[:top]
    return {
        "rss_mb": round(total / 1024, 1),
        "anon_mb": round(anon / 1024, 1),
        "file_mb": round(file / 1024, 1),
        "top_mb": {k: round(v / 1024, 1) for k, v in biggest},
    }


def status(pid: int) -> dict[str, float]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {
        k: round(int(re.search(rf"{k}:\s+(\d+)", text).group(1)) / 1024, 1)  # type: ignore[union-attr]
        for k in ("VmHWM", "VmRSS", "RssAnon", "RssFile")
    }


def run(repo: Path, state: Path, vault: Path, detail: bool) -> dict[str, Any]:
    token = "bench-serve-memory"
    env = {**os.environ, "VAULT_AGENT_INDEX_DIR": str(state), "VAULT_AGENT_TOKEN": token}
    if (repo / ".venv/bin/vault-agent").exists():
        cmd = [str(repo / ".venv/bin/vault-agent")]
    else:  # a source tree (git archive of a branch): this interpreter, that code first on the path
        env["PYTHONPATH"] = str(repo)
        cmd = [sys.executable, "-c", "from vault_agent.cli.main import run; run()"]
    cmd += ["serve", "--vault", str(vault), "--port", "0"]
    proc = subprocess.Popen(
        cmd, env=env, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    out: dict[str, Any] = {"repo": str(repo), "steps": {}}
    try:
        assert proc.stdout is not None
        match = re.search(r"http://[\d.]+:\d+", proc.stdout.readline())
        assert match
        url = match.group(0)
        out["started"] = status(proc.pid)
        for step, route, params in mix(vault):
            t = time.perf_counter()
            req = urllib.request.Request(
                f"{url}{route}?{urllib.parse.urlencode(params)}", headers={"Authorization": f"Bearer {token}"}
            )
            try:
                with urllib.request.urlopen(req, timeout=1200) as r:
                    body = json.loads(r.read())
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    continue  # a route this checkout does not have
                raise
            ms = round((time.perf_counter() - t) * 1000, 1)
            if step.startswith("more_"):
                out["steps"].setdefault(step, {"ms": []})["ms"].append(ms)
                continue
            st = status(proc.pid)
            out["steps"][step] = {"ms": ms, **st, "warnings": [w["code"] for w in body.get("warnings", [])]}
            if detail:
                out["steps"][step]["smaps"] = smaps(proc.pid)
        out["final"] = status(proc.pid)
        out["final_smaps"] = smaps(proc.pid, top=12)
        cpu = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        out["serve_cpu_s"] = round((int(cpu[11]) + int(cpu[12])) / os.sysconf("SC_CLK_TCK"), 1)
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    return out


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument(
        "--state",
        type=Path,
        action="append",
        help="once, or once per --repo in order (a checkout of another schema needs its own index)",
    )
    ap.add_argument("--vault", type=Path, default=Path("/work/bench-data/v100k"))
    ap.add_argument(
        "--repo",
        type=Path,
        action="append",
        help="a checkout to serve from (repeat); required but under --smoke",
    )
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--detail", action="store_true", help="smaps breakdown after every step")
    args = benchkit.parse(ap, smoke={"repo": [benchkit.REPO]})
    with benchkit.workdir("serve-memory") as work:
        if args.smoke:
            made = benchkit.indexed_vault(work / "vault", 30)
            args.vault, args.state = made.vault, [made.index_dir]
        elif not args.repo or not args.state:
            ap.error("--repo and --state are required (or --smoke)")
        _measure(args)


def _measure(args: argparse.Namespace) -> None:
    results: list[dict[str, Any]] = []
    before = load()
    for r in range(args.rounds):
        order = args.repo if r % 2 == 0 else args.repo[::-1]
        states = dict(
            zip(args.repo, args.state if len(args.state) > 1 else args.state * len(args.repo), strict=True)
        )
        for repo in order:
            res = run(repo.resolve(), states[repo], args.vault, args.detail)
            res["load"] = load()
            results.append(res)
            print(json.dumps({k: res[k] for k in ("repo", "final", "load")}), flush=True)
    summary = {}
    for repo in args.repo:
        mine = [x for x in results if x["repo"] == str(repo.resolve())]
        summary[str(repo)] = {
            "peak_mb": [x["final"]["VmHWM"] for x in mine],
            "rss_mb": [x["final"]["VmRSS"] for x in mine],
        }
    print(
        json.dumps(
            {"runs": results, "summary": summary, "load_before": before, "load_after": load()},
            indent=1,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
