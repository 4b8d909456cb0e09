"""Core-function latency of orientation and outline on a generated vault (not in CI).

    .venv/bin/python ops/bench/bench_orientation.py --notes 100000 --work /tmp/bench-orient
    .venv/bin/python ops/bench/bench_orientation.py --vault V --state S   # an existing index

Generates the vault with ops/gen_vault.py (seed 1) and indexes it once (both reused when
present; or takes --vault and --state as they are: the switch step replaces one note file
by rename, so a hard-linked copy of a shared vault (`cp -al`) is never edited), then, for each of --runs runs with a fresh SnapshotReader: snapshot open time
(first acquire), p50/p99 of --requests calls of overview, tree, tags, facets and
get_note_outline (paths drawn round-robin from the snapshot), and the switch time to a
newer snapshot after a one-note incremental index (loaded by the first acquire, not
preloaded during the commit). Prints the median over runs as JSON.
The transport engineer measures the same over HTTP.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

from vault_agent.config import Settings
from vault_agent.contracts import CURRENT_FILE
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.publish import remove_publish_listener
from vault_agent.query import orientation, outline
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _time(fn: Callable[[], Any], n: int) -> dict[str, float]:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(_pct(samples, 0.5), 2), "p99_ms": round(_pct(samples, 0.99), 2)}


def _prepare(work: Path, notes: int, vault: Path | None, state: Path | None) -> Settings:
    if vault is not None and state is not None:
        return Settings(vault=vault, index_dir=state)
    vault = work / "vault"
    if not vault.exists():
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                str(REPO / "ops/gen_vault.py"),
                str(vault),
                "--notes",
                str(notes),
                "--seed",
                "1",
            ],
            check=True,
        )
        print(f"generated {notes} notes in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    settings = Settings(vault=vault, index_dir=work / "state")
    if not (settings.index_dir / CURRENT_FILE).exists():
        t0 = time.perf_counter()
        build_index(settings, full=True)
        print(f"indexed in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return settings


def _one_run(settings: Settings, requests: int, run: int) -> dict[str, Any]:
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    try:
        t0 = time.perf_counter()
        with reader.acquire() as view:
            paths = [
                r[0]
                for r in view.con.execute("SELECT path FROM notes ORDER BY hash(path) LIMIT 1000").fetchall()
            ]
        out: dict[str, Any] = {"open_ms": round((time.perf_counter() - t0) * 1000, 1)}
        out["overview"] = _time(lambda: orientation.overview(reader), requests)
        out["tree"] = _time(lambda: orientation.tree(reader), requests)
        out["tags"] = _time(lambda: orientation.tags(reader), requests)
        out["facets"] = _time(lambda: orientation.facets(reader), requests)
        it = iter(range(10**9))
        out["get_note_outline"] = _time(
            lambda: outline.get_note_outline(reader, paths[next(it) % len(paths)]), requests
        )
        # Second pass over the same notes: one-note reads whose segment data is in memory
        # (the first pass includes loading each segment's headings on first use).
        it = iter(range(10**9))
        out["get_note_outline_warm"] = _time(
            lambda: outline.get_note_outline(reader, paths[next(it) % len(paths)]), requests
        )
        # Switch: change one note, commit incrementally, time the acquire that loads it.
        note = settings.vault / paths[run % len(paths)]
        tmp = note.with_name(note.name + ".bench-tmp")
        tmp.write_text(
            note.read_text(encoding="utf-8") + f"\nbench edit {run} {time.time()}\n", encoding="utf-8"
        )
        tmp.replace(note)  # a new inode: a hard-linked source vault stays untouched
        # Without this, the reader would load the commit inside build_index (publish.py's
        # preload, as in `serve --watch`) and the acquire below would measure only the pin.
        remove_publish_listener(settings.index_dir, reader.preload)
        build_index(settings)
        t0 = time.perf_counter()
        with reader.acquire():
            pass
        out["switch_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        return out
    finally:
        reader.close()


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    med: dict[str, Any] = {}
    for key, value in runs[0].items():
        if isinstance(value, dict):
            med[key] = {k: round(statistics.median(r[key][k] for r in runs), 2) for k in value}
        else:
            med[key] = round(statistics.median(r[key] for r in runs), 1)
    return med


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "vault-agent-bench-orientation"
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--vault", type=Path, default=None, help="an indexed vault (with --state)")
    ap.add_argument("--state", type=Path, default=None, help="its state dir (VAULT_AGENT_INDEX_DIR)")
    args = benchkit.parse(ap, smoke={"notes": 40, "runs": 1, "requests": 3})
    args.work.mkdir(parents=True, exist_ok=True)
    settings = _prepare(args.work, args.notes, args.vault, args.state)
    print(json.dumps({"uptime_start": os.getloadavg()}), file=sys.stderr)
    runs = [_one_run(settings, args.requests, i) for i in range(args.runs)]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    result = {
        "uptime_end": os.getloadavg(),
        "notes": args.notes,
        "runs": args.runs,
        "max_rss_mb": rss_mb,
        "median": _median(runs),
        "each": runs,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
