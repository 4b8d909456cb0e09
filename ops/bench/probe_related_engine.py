"""Probe for issue 21 item 6 (not product code): `related`'s term-overlap pool from the
full-text engine instead of the exact chunk BM25 over the `terms` postings.

    nice .venv/bin/python ops/bench/probe_related_engine.py --vault V100K --state S --sample 60

For every k-th note: the note's 10 terms (as `related` picks them), then (a) the exact pool
(`query.bm25`, what `related` answers with) and (b) tantivy's top 200 chunks of a boolean
query of the same terms on `body` (stemmed, tantivy's BM25 with its field norms). Prints the
CPU p50 of each and how much the top 10 term-overlap notes agree (Jaccard, mean): the cost
and the price in answers of making `related` ~50 ms at 100k, for the lead to decide.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import tantivy  # noqa: E402

from vault_agent.api.registry import make_vault  # noqa: E402
from vault_agent.config import Settings  # noqa: E402
from vault_agent.query import related  # noqa: E402
from vault_agent.query.bm25 import bm25, chunk_map, corpus_stats, postings_index  # noqa: E402
from vault_agent.query.search_engine import open_engine  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.search_fields import PATH_FIELD, analyze_terms  # noqa: E402


def best_per_note(hits: list[tuple[str, float]], me: str) -> list[str]:
    best: dict[str, float] = {}
    for path, score in hits:
        if path != me and path not in best:
            best[path] = score
    return sorted(best, key=lambda p: (-best[p], p))[:10]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=60)
    args = ap.parse_args()
    settings = Settings(vault=args.vault, index_dir=args.state)
    reader = SnapshotReader(settings, make_vault(settings), freshness=lambda _m: "fresh")
    notes = sorted(p.relative_to(args.vault).as_posix() for p in args.vault.rglob("*.md"))
    notes = notes[:: max(1, len(notes) // args.sample)][: args.sample]
    cache: dict[Any, Any] = {}
    related.related(reader, notes[0], 10, cache)  # builds the layouts
    cpu: dict[str, list[float]] = {"exact": [], "engine": []}
    agree: list[float] = []
    for me in notes:
        with reader.acquire() as view:
            stats = corpus_stats(view.con, cache, view.manifest.snapshot_id)
            terms = list(related._top_terms(view, args.state, cache, me, stats[0]))
            t = time.process_time()
            pool = bm25(view.con, terms, related.TERM_POOL, stats, postings_index(reader, view, cache),
                        chunk_map(reader, view, cache))  # fmt: skip
            exact = best_per_note([(p, s) for p, _, s in pool], me)
            cpu["exact"].append((time.process_time() - t) * 1000)
            t = time.process_time()
            index, searcher = open_engine(args.state, view.manifest.search_index)
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(index.schema, "body", w)) for w in analyze_terms(terms)]
            )
            hits = searcher.search(query, related.TERM_POOL, count=False).hits
            engine = best_per_note([(str(searcher.doc(a).get_first(PATH_FIELD)), s) for s, a in hits], me)
            cpu["engine"].append((time.process_time() - t) * 1000)
        union = set(exact) | set(engine)
        agree.append(len(set(exact) & set(engine)) / len(union) if union else 1.0)
    reader.close()
    print(json.dumps({
        "notes": len(notes),
        "exact_pool_cpu_ms_p50": round(statistics.median(cpu["exact"]), 1),
        "engine_pool_cpu_ms_p50": round(statistics.median(cpu["engine"]), 1),
        "top10_jaccard_mean": round(statistics.fmean(agree), 3),
        "load": Path("/proc/loadavg").read_text().split()[:3],
    }))  # fmt: skip


if __name__ == "__main__":
    main()
