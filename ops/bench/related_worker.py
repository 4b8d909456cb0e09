"""One side of `bench_related.py`: `related` of one checkout, in a process of its own.

    <repo>/.venv/bin/python ops/bench/related_worker.py --repo R --vault V --state S

Imports `vault_agent` from --repo (so main's `related` runs with main's own modules), then
reads one `note<TAB>0|1` per stdin line and answers one JSON line: wall and process CPU time of
`related(note, limit 10)` (DuckDB threads included), the answer, and (untimed) the note's
top 10 term-overlap notes as that checkout computes them when the flag is 1 (the exact BM25 pool where
`query.bm25` exists, else the engine pool), for the agreement figure. The first line is
answered after the first call, which builds the per-reader layouts. --smoke: this checkout
over a small generated vault, one note given in place of stdin.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import benchkit  # ops/bench: the script's own directory


def term_top10(related: Any, reader: Any, cache: dict[Any, Any], me: str, index_dir: Path) -> list[str]:
    """The note's 10 best term-overlap notes by this checkout's term pool (ties by path)."""
    with reader.acquire() as view:
        if hasattr(related, "_term_pool"):
            terms = related._top_terms(view, index_dir, cache, me, view.live.chunk_count())
            best = related._term_pool(index_dir, view, me, list(terms))
        else:  # main: the exact pool, as its related() computes it
            from vault_agent.query.bm25 import bm25, chunk_map, corpus_stats, postings_index  # type: ignore[import-not-found]

            index = postings_index(reader, view, cache)
            chunks = chunk_map(reader, view, cache) if index is not None else None
            stats = (
                (chunks.count, chunks.avg)
                if chunks is not None
                else corpus_stats(view.con, cache, view.manifest.snapshot_id)
            )
            terms = related._top_terms(view, index_dir, cache, me, stats[0])
            best = {}
            for path, _, score in bm25(view.con, list(terms), related.TERM_POOL, stats, index, chunks, terms):
                if path != me and path not in best:
                    best[path] = score
    return sorted(best, key=lambda p: (-best[p], p))[:10]


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("--vault", type=Path)
    ap.add_argument("--state", type=Path)
    args = benchkit.parse(ap, smoke={})
    sys.path.insert(0, str(args.repo.resolve()))
    lines: Iterable[str] = sys.stdin
    with benchkit.workdir("related-worker") as work:
        benchkit.inputs_or_smoke(ap, args, work, state="state")
        if args.smoke:
            lines = [
                sorted(p.relative_to(args.vault).as_posix() for p in args.vault.rglob("*.md"))[0] + "\t1\n"
            ]
        answer(args, lines)


def answer(args: argparse.Namespace, lines: Iterable[str]) -> None:
    from vault_agent.config import Settings
    from vault_agent.paths import vault_for_settings
    from vault_agent.query import related
    from vault_agent.query.snapshot import SnapshotReader

    settings = Settings(vault=args.vault, index_dir=args.state)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    cache: dict[Any, Any] = {}
    first = True
    for line in lines:
        note, _, want_terms = line.rstrip("\n").partition("\t")
        t, c = time.perf_counter(), time.process_time()
        data = related.related(reader, note, 10, cache).data
        wall, cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
        out = {
            "wall_ms": wall,
            "cpu_ms": cpu,
            "first": first,
            "answer": data.model_dump(mode="json", by_alias=True),
        }
        if want_terms == "1":
            out["terms_top10"] = term_top10(related, reader, cache, note, Path(args.state))
        first = False
        print(json.dumps(out), flush=True)
    reader.close()


if __name__ == "__main__":
    main()
