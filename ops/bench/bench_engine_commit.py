#!/usr/bin/env python3
"""Per-commit cost of the full-text engine: one-note edits applied by an in-process Indexer.

    .venv/bin/python ops/bench/bench_engine_commit.py --vault V --index-dir S [--edits 15]
        [--search WORD]

Each edit appends a unique token to one note of --vault
(a writable copy: the bench changes it), then an `upsert` event (what the watcher logs) is applied: one snapshot per edit.
Reports p50/p99 of the whole commit and of the engine's part (`SearchIndexWriter.freeze`:
engine commit + freeze of the snapshot's engine dir), and the time of the first search
for the new token in a reader opened before the edits (it switches to the new snapshot).
Runs whatever `vault_agent` is first on sys.path (set PYTHONPATH to compare two trees).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

import benchkit

from vault_agent.config import Settings
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.search_index import SearchIndexWriter
from vault_agent.paths import vault_for_settings
from vault_agent.query.search import SearchRequest, search
from vault_agent.query.snapshot import SnapshotReader


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(round(q * (len(s) - 1))))], 1)


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--index-dir", type=Path)
    ap.add_argument("--edits", type=int, default=15)
    ap.add_argument("--seed", type=int, default=3)
    args = benchkit.parse(ap, smoke={"edits": 2})
    with benchkit.workdir("engine-commit") as work:
        benchkit.inputs_or_smoke(ap, args, work, "vault", "index_dir")
        _measure(args)


def _measure(args: argparse.Namespace) -> None:
    settings = Settings(vault=args.vault, index_dir=args.index_dir)
    freeze_ms: list[float] = []
    real_freeze = SearchIndexWriter.freeze

    def timed_freeze(self: SearchIndexWriter, snapshot_id: int) -> str:
        t0 = time.perf_counter()
        try:
            return real_freeze(self, snapshot_id)
        finally:
            freeze_ms.append((time.perf_counter() - t0) * 1000)

    SearchIndexWriter.freeze = timed_freeze  # type: ignore[method-assign]
    notes = sorted(str(p.relative_to(args.vault)) for p in args.vault.rglob("*.md"))
    rnd = random.Random(args.seed)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    search(reader, SearchRequest("warm up", 10))
    lock = WriterLock(args.index_dir)
    lock.acquire()
    commit_ms: list[float] = []
    found_ms: list[float] = []
    try:
        idx = Indexer(settings)
        idx.load()
        idx.catch_up()
        freeze_ms.clear()
        for i in range(args.edits):
            rel = rnd.choice(notes)
            token = f"qx{os.getpid()}z{i}w"
            with open(args.vault / rel, "a", encoding="utf-8") as f:
                f.write(f"\n{token}\n")
            t0 = time.perf_counter()
            idx.log.append([NewEvent("upsert", rel, None, None, None, "watcher")])  # as the watcher logs it
            idx.apply(idx.log.read_after(idx.applied_seq))
            t1 = time.perf_counter()
            hits = search(reader, SearchRequest(token, 10)).data.results
            t2 = time.perf_counter()
            assert [h.path for h in hits] == [rel], (rel, [h.path for h in hits])
            commit_ms.append((t1 - t0) * 1000)
            found_ms.append((t2 - t1) * 1000)
    finally:
        lock.release()
        reader.close()
    out = {
        "edits": args.edits,
        "commit_ms_p50": _pct(commit_ms, 0.5),
        "commit_ms_p99": _pct(commit_ms, 0.99),
        "engine_freeze_ms_p50": _pct(freeze_ms, 0.5),
        "engine_freeze_ms_p99": _pct(freeze_ms, 0.99),
        "first_search_ms_p50": _pct(found_ms, 0.5),
        "first_search_ms_p99": _pct(found_ms, 0.99),
        "write_to_found_ms_p50": round(
            statistics.median(c + f for c, f in zip(commit_ms, found_ms, strict=True)), 1
        ),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
