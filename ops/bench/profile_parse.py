#!/usr/bin/env python3
"""Where the parse CPU of a full index goes: cProfile over the parser worker's own loop.

    .venv/bin/python ops/bench/profile_parse.py /tmp/v10k [--notes 2000] [--top 35]

Runs `indexer.parse_pool.parse_batch` (read, frontmatter, block parse, headings, chunks, terms,
links, Arrow tables) over the first --notes notes of the vault in batches of 128, as one
worker process does; prints CPU seconds per 1,000 notes without the profiler, then the
profile sorted by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

import benchkit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from vault_agent.config import load_settings
from vault_agent.indexer.parse_pool import TASK_NOTES, parse_batch
from vault_agent.paths import vault_for_settings


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("vault", type=Path, nargs="?")
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--top", type=int, default=35)
    args = benchkit.parse(ap, smoke={"notes": 20, "top": 5})
    with benchkit.workdir("profile-parse-vault") as made:
        benchkit.inputs_or_smoke(ap, args, made, "vault", notes=20, indexed=False)
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    vault_dir = args.vault.resolve()
    vault = vault_for_settings(load_settings({"vault": vault_dir, "index_dir": "/tmp/profile-parse"}, env={}))
    rels: list[str] = []
    for d, dn, fn in os.walk(vault_dir):
        dn[:] = sorted(x for x in dn if not x.startswith("."))
        rels += [str(Path(d, f).relative_to(vault_dir)) for f in sorted(fn) if f.endswith(".md")]
    rels = rels[: args.notes]
    parse_batch(vault, rels[:50])  # imports and caches warm

    def run() -> None:
        for i in range(0, len(rels), TASK_NOTES):
            parse_batch(vault, rels[i : i + TASK_NOTES])

    start = time.process_time()
    run()
    per_1000 = (time.process_time() - start) / len(rels) * 1000
    print(f"{len(rels)} notes: {per_1000:.2f} CPU-s per 1,000 notes (no profiler)")
    profile = cProfile.Profile()
    profile.runcall(run)
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
