#!/usr/bin/env python3
"""Instructions the parser workers execute per note, side by side for two source trees.

    git archive main | tar -x -C /tmp/main-src
    .venv/bin/python ops/bench/bench_parse_cost.py V10K --tree /tmp/main-src --tree . --notes 400

For each tree, `indexer.parse_pool.parse_batch` (read, frontmatter, block parse, chunks,
terms, links, properties, tags, Arrow tables: one worker's loop) runs over the first --notes
notes of the vault under valgrind's callgrind, and once over none; the difference is the
parse's own instruction count. Instructions do not depend on the machine's load (CPU time
on a shared box varies by tens of percent between runs), so the ratio is reproducible.
Slow: callgrind runs ~50x slower than native (400 notes take about a minute per tree).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import benchkit

CHILD = r"""
import os, sys
from pathlib import Path
from vault_agent.config import load_settings
from vault_agent.indexer.parse_pool import TASK_NOTES, parse_batch
from vault_agent.paths import vault_for_settings
root, n = Path(sys.argv[1]), int(sys.argv[2])
vault = vault_for_settings(load_settings({"vault": root, "index_dir": "/tmp/parse-cost-state"}, env={}))
rels = []
for d, dn, fn in os.walk(root):
    dn[:] = sorted(x for x in dn if not x.startswith("."))
    rels += [str(Path(d, f).relative_to(root)) for f in sorted(fn) if f.endswith(".md")]
rels = rels[:n]
for i in range(0, len(rels), TASK_NOTES):
    parse_batch(vault, rels[i : i + TASK_NOTES])
"""


def instructions(tree: Path, vault: Path, notes: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", CHILD,
             str(vault), str(notes)],
            env=env, capture_output=True, text=True, check=True, cwd=tmp,
        )  # fmt: skip
    found = re.search(r"Collected : (\d+)", proc.stderr)
    assert found, proc.stderr[-2000:]
    return int(found.group(1))


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("vault", type=Path, nargs="?")
    ap.add_argument(
        "--tree", type=Path, action="append", help="a source tree (repeat); required but under --smoke"
    )
    ap.add_argument("--notes", type=int, default=400)
    args = benchkit.parse(ap, smoke={"tree": [benchkit.REPO], "notes": 3})
    if not args.tree:
        ap.error("--tree is required (or --smoke)")
    with benchkit.workdir("parse-cost-vault") as made:
        benchkit.inputs_or_smoke(ap, args, made, "vault", notes=5, indexed=False)
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    out: dict[str, dict[str, float]] = {}
    for tree in args.tree:
        base = instructions(tree, args.vault, 0)
        full = instructions(tree, args.vault, args.notes)
        out[str(tree)] = {"instructions_per_note": round((full - base) / args.notes)}
    first = out[str(args.tree[0])]["instructions_per_note"]
    for row in out.values():
        row["ratio_to_first"] = round(row["instructions_per_note"] / first, 3)
    print(json.dumps({"notes": args.notes, "trees": out}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
