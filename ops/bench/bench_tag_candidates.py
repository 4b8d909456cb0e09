"""Tag rename at scale: candidates from the snapshot's `tags` table beside the chunk-text
scan they replaced, and the whole dry run with each, in one run.

    V=/tmp/v100k S=/tmp/state100k     # gen_vault.py V --notes 100000; vault-agent index
    nice .venv/bin/python ops/bench/bench_tag_candidates.py --vault $V --state $S \\
        --tags session priority --runs 3 [--old-ref int]

The scan is `vault_agent/query/tag_candidates.py` of --old-ref (`git show`, loaded beside
this checkout's modules: it only needs the snapshot reader). Per tag and side, alternating
per run: CPU and wall of the candidate query alone, and of the dry run (`files.rename_tag`
with those candidates, limit 10: every candidate read and planned); medians over --runs,
the candidate counts and the notes the rename would change (equal on both sides when the
table finds what the scan found). Prints JSON with the load before and after. --smoke: a
small generated vault, this tree's candidates against themselves (--old-ref HEAD).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import benchkit  # noqa: E402  (ops/bench: the script's own directory)

from vault_agent.api.operation import AppContext  # noqa: E402
from vault_agent.config import Settings  # noqa: E402
from vault_agent.files.rename_tag import RenameTagRequest, rename_tag  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.query.tag_candidates import tag_candidates  # noqa: E402


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def old_candidates(ref: str) -> Callable[..., Any]:
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{ref}:vault_agent/query/tag_candidates.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "tag_candidates_old.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tag_candidates_old", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tag_candidates  # type: ignore[no-any-return]


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, (time.process_time() - c) * 1000, (time.perf_counter() - t) * 1000


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--state", type=Path)
    ap.add_argument("--tags", nargs="+", default=["session", "priority"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old-ref", default="int")
    args = benchkit.parse(ap, smoke={"runs": 1, "old_ref": "HEAD", "tags": ["project"]})
    with benchkit.workdir("bench-tag-candidates") as work:
        benchkit.inputs_or_smoke(ap, args, work, state="state")
        run(args)


def run(args: argparse.Namespace) -> None:
    settings = Settings(vault=args.vault, index_dir=args.state, writes_enabled=True)
    vault = vault_for_settings(settings)
    ctx = AppContext(
        settings=settings, vault=vault, reader=SnapshotReader(settings, vault, freshness=lambda _m: "fresh")
    )
    sides: dict[str, Callable[..., Any]] = {"scan": old_candidates(args.old_ref), "table": tag_candidates}
    out: dict[str, Any] = {"load_before": load()}
    for tag in args.tags:
        samples: dict[str, dict[str, list[float]]] = {
            s: {"cand_cpu": [], "cand_wall": [], "dry_cpu": [], "dry_wall": []} for s in sides
        }
        facts: dict[str, dict[str, Any]] = {}
        for run in range(args.runs):
            for name in list(sides) if run % 2 == 0 else list(sides)[::-1]:
                find = sides[name]
                found, cpu, wall = timed(find, ctx.reader, tag)
                samples[name]["cand_cpu"].append(cpu)
                samples[name]["cand_wall"].append(wall)
                candidates = functools.partial(find, ctx.reader)
                request = RenameTagRequest(tag, tag + "-renamed", limit=10)
                dry, cpu, wall = timed(rename_tag, ctx, request, candidates)
                samples[name]["dry_cpu"].append(cpu)
                samples[name]["dry_wall"].append(wall)
                facts[name] = {"candidates": len(found.data), "notes_total": dry.data.notes_total}
        out[tag] = {
            name: {**facts[name], **{k: round(statistics.median(v), 1) for k, v in samples[name].items()}}
            for name in sides
        }
    ctx.reader.close()
    out["load_after"] = load()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
