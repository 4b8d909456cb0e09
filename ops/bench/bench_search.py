"""Core-function latency of search, vault_search (grep) and vault_find on a generated vault.

    .venv/bin/python ops/bench/bench_search.py --notes 100000 --work /tmp/bench-search
    .venv/bin/python ops/bench/bench_search.py --vault V --index-dir S   # reuse an indexed vault
    ... --skip-grep --skip-find   # search only (1/2/4 words, group=note, questions)

Generates the vault with ops/gen_vault.py (seed 1) and indexes it once (both reused when
present). Then, for each of --runs runs with a fresh SnapshotReader: p50/p99 of
--requests BM25 searches for each of 1-, 2- and 4-word Latin and Japanese queries (drawn
deterministically from the generator's vocabulary), the time of vault_search regex over
the whole vault (a pattern that matches nothing, so every chunk is examined, and a common
pattern cut at 50 results), and vault_find end to end. Prints the median over runs as JSON
with the peak RSS of the process. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.find import FindRequest, vault_find
from vault_agent.query.grep import GrepRequest, vault_search
from vault_agent.query.search import SearchRequest, search
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]

LATIN = [
    "beacon",
    "lighthouse",
    "budget",
    "schedule",
    "meeting",
    "snapshot",
    "parser",
    "watcher",
    "ledger",
    "harbor",
    "lantern",
    "roadmap",
    "milestone",
    "pipeline",
    "research",
    "prototype",
]
JAPANESE = ["東京", "議事録", "予算", "会議", "設計", "検索", "精度", "共有", "進捗", "課題", "拠点", "資料"]


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _time(fn: Callable[[Any], Any], args: list[Any]) -> dict[str, float]:
    samples = []
    for a in args:
        t0 = time.perf_counter()
        fn(a)
        samples.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(_pct(samples, 0.5), 2), "p99_ms": round(_pct(samples, 0.99), 2)}


def _queries(words: list[str], size: int, n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.sample(words, size)) for _ in range(n)]


def _prepare(args: argparse.Namespace) -> Settings:
    if args.vault:
        return Settings(
            vault=Path(args.vault), index_dir=Path(args.index_dir or Path(args.vault) / ".vault-agent")
        )
    work = Path(args.work)
    vault = work / "vault"
    if not vault.exists():
        cmd = [
            sys.executable,
            str(REPO / "ops/gen_vault.py"),
            str(vault),
            "--notes",
            str(args.notes),
            "--seed",
            "1",
        ]
        subprocess.run(cmd, check=True)
    settings = Settings(vault=vault, index_dir=work / "state")
    if not (work / "state" / "CURRENT").exists():
        t0 = time.perf_counter()
        build_index(settings, full=True)
        print(f"indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return settings


def one_run(
    settings: Settings, requests: int, run: int, skip_grep: bool = False, skip_find: bool = False
) -> dict[str, Any]:
    vault = vault_for_settings(settings)
    reader = SnapshotReader(settings, vault, freshness=lambda _m: "fresh")
    cache: dict[Any, Any] = {}
    out: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        search(reader, SearchRequest("warm up", 10))
        out["first_search_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        for name, words in (("latin", LATIN), ("japanese", JAPANESE)):
            for size in (1, 2, 4):
                qs = _queries(words, size, requests, seed=run * 100 + size)
                out[f"search_{name}_{size}w"] = _time(lambda q: search(reader, SearchRequest(q, 10)), qs)
        qs = _queries(LATIN, 2, requests, seed=run * 100 + 7)
        out["search_latin_2w_group_note"] = _time(
            lambda q: search(reader, SearchRequest(q, 10, group="note")), qs
        )
        qs = _queries(LATIN, 4, requests, seed=run * 100 + 8)
        out["search_latin_4w_group_note"] = _time(
            lambda q: search(reader, SearchRequest(q, 10, group="note")), qs
        )
        qs = _queries(JAPANESE, 2, requests, seed=run * 100 + 9)
        out["search_japanese_2w_group_note"] = _time(
            lambda q: search(reader, SearchRequest(q, 10, group="note")), qs
        )
        questions = [
            f"how do I plan the {a} {b} for the next meeting" for a, b in zip(LATIN, LATIN[1:], strict=False)
        ]
        out["search_question_en"] = _time(lambda q: search(reader, SearchRequest(q, 10)), questions)
        out["search_question_ja"] = _time(
            lambda q: search(reader, SearchRequest(q, 10)),
            [f"{a}の{b}はどうすればいいですか" for a, b in zip(JAPANESE, JAPANESE[1:], strict=False)],
        )
        if skip_grep and skip_find:
            return out
        if skip_grep:
            out["find"] = _time(
                lambda q: vault_find(vault, reader, FindRequest(q), cache),
                _queries(LATIN, 2, 5, seed=run) + _queries(JAPANESE, 2, 5, seed=run),
            )
            return out
        out["grep_regex_no_match"] = _time(
            lambda q: vault_search(vault, reader, GrepRequest(q, limit=50)),
            [r"zebra[0-9]{3}x", r"qu[iy]ckly\s+zz"],
        )
        out["grep_regex_common"] = _time(
            lambda q: vault_search(vault, reader, GrepRequest(q, limit=50)), [r"beacon\s+\w+", "東京"]
        )
        out["grep_plain_no_match"] = _time(
            lambda q: vault_search(vault, reader, GrepRequest(q, mode="plain", limit=50)), ["zebra crossing"]
        )
        finds = _queries(LATIN, 2, 5, seed=run) + _queries(JAPANESE, 2, 5, seed=run)
        out["find"] = _time(lambda q: vault_find(vault, reader, FindRequest(q), cache), finds)
    finally:
        reader.close()
    return out


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key, value in runs[0].items():
        if isinstance(value, dict):
            merged[key] = {k: round(statistics.median(r[key][k] for r in runs), 2) for k in value}
        else:
            merged[key] = round(statistics.median(r[key] for r in runs), 2)
    return merged


def main() -> None:
    parser = benchkit.parser(__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "bench-search"))
    parser.add_argument("--vault", default=None, help="Reuse an already indexed vault.")
    parser.add_argument("--index-dir", default=None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--skip-grep", action="store_true", help="search and find only")
    parser.add_argument("--skip-find", action="store_true", help="with --skip-grep: search only")
    args = benchkit.parse(parser, smoke={"notes": 40, "runs": 1, "requests": 3})
    settings = _prepare(args)
    runs = [one_run(settings, args.requests, i, args.skip_grep, args.skip_find) for i in range(args.runs)]
    result = _median(runs)
    result["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
