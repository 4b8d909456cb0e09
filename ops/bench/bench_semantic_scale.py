"""Semantic search at scale: vector memory, hybrid latency and `serve` RSS at 100k notes.

    # 1. lexical index of the generated vault (state outside the vault):
    VAULT_AGENT_SEMANTIC=off VAULT_AGENT_INDEX_DIR=$S vault-agent index --vault /work/bench-data/v100k
    # 2. embedding files with the REAL passage rows (paths, chunks, counts) but random unit
    #    vectors (embedding 100k notes for real takes hours on 2 cores; search cost and memory
    #    do not depend on the vectors' values), committed like the writer commits them:
    .venv/bin/python ops/bench/bench_semantic_scale.py fake-embed --state $S --vault V
    # 3. in-process latency of search (lexical / semantic / hybrid, query embedding included):
    .venv/bin/python ops/bench/bench_semantic_scale.py latency --state $S --vault V --runs 3
    # 4. peak RSS of `vault-agent serve` after hybrid searches over HTTP:
    .venv/bin/python ops/bench/bench_semantic_scale.py serve-rss --state $S --vault V
    # 5. what HTTP adds to search (same queries, same state, alternated, paired medians):
    .venv/bin/python ops/bench/bench_semantic_scale.py http-overhead --state $S --vault V --runs 3
    # sketch recall: how often sketch+rescore returns the exact top-k, on REAL vectors
    # (an embedded state dir, or bench_granularity.py's vector cache file):
    .venv/bin/python ops/bench/bench_semantic_scale.py sketch-recall --state /tmp/bench-granularity/cache.pkl

Prints JSON with the load average before and after. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.contracts import SEGMENTS_DIR  # noqa: E402
from vault_agent.freshness import read_current_manifest, vault_for_settings  # noqa: E402

QUERIES = [
    "how do I keep notes in sync across devices",
    "quarterly planning meeting notes",
    "what did we decide about the storage layer",
    "ideas for improving search ranking",
    "pipeline",
    "customer feedback on the dashboard",
    "如何在手机上同步笔记",
    "週次レビューのまとめ",
    "migration checklist for the new schema",
    "release notes draft",
]


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def fake_embed(state: Path, vault: Path, seed: int = 1) -> dict[str, Any]:
    from vault_agent.indexer.build import open_writer_dirs
    from vault_agent.indexer.lock import WriterLock
    from vault_agent.semantic.embed_job import segment_passages
    from vault_agent.semantic.encoder import active_model
    from vault_agent.semantic.store_write import Rows, write_complete
    from vault_agent.semantic.vectors import quantize

    settings = Settings(vault=vault, index_dir=state)
    lock = WriterLock(state)
    idx = open_writer_dirs(settings, lock)
    rng = np.random.default_rng(seed)
    model = active_model()
    assert model.model_id is not None, model.reason
    model_id, dim = model.model_id, model.dim
    rows = 0
    try:
        assert idx.manifest is not None
        segments = []
        for seg in idx.manifest.segments:
            passages = segment_passages(state, seg)
            codes = np.empty((len(passages), dim), np.int8)
            scale = np.empty(len(passages), np.float32)
            for s in range(0, len(passages), 20_000):
                v = rng.standard_normal((min(20_000, len(passages) - s), dim)).astype(np.float32)
                v /= np.linalg.norm(v, axis=1, keepdims=True)
                codes[s : s + len(v)], scale[s : s + len(v)] = quantize(v)
            files = write_complete(
                state,
                seg.segment_id,
                model_id,
                Rows(
                    [p.path for p in passages],
                    [p.chunk_ordinal for p in passages],
                    [p.text_sha for p in passages],
                    codes,
                    scale,
                ),
            )
            rows += len(passages)
            segments.append(seg.model_copy(update={"files": {**seg.files, **files}}))
        m = idx.commit_snapshot(segments, idx.manifest.applied_seq, idx.manifest.skipped)
    finally:
        lock.release()
    size = sum((state / SEGMENTS_DIR / s.files["embeddings_v2"]).stat().st_size for s in m.segments)
    return {
        "notes": m.note_count,
        "passages": rows,
        "per_note": round(rows / max(m.note_count, 1), 2),
        "embedding_files_mb": round(size / 2**20, 1),
    }


def latency(state: Path, vault: Path, runs: int) -> dict[str, Any]:
    import resource

    from vault_agent.query.search import SearchRequest, search
    from vault_agent.query.snapshot import SnapshotReader
    from vault_agent.semantic import semantic_search
    from vault_agent.semantic.encoder import load_encoder

    settings = Settings(vault=vault, index_dir=state)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    enc = load_encoder()
    assert enc is not None
    t0 = time.perf_counter()
    with reader.acquire() as view:
        semantic_search(reader, view, "warm up", 10)  # loads every embedding file once
    first_load_s = time.perf_counter() - t0
    out: dict[str, Any] = {"first_load_s": round(first_load_s, 2)}
    for mode in ("lexical", "semantic", "hybrid"):
        medians, p99s, cpus = [], [], []
        for _ in range(runs):
            times, cpu = [], []
            for q in QUERIES * 4:
                s, c = time.perf_counter(), time.process_time()
                search(reader, SearchRequest(q, 10, mode=mode))
                times.append((time.perf_counter() - s) * 1000)
                cpu.append((time.process_time() - c) * 1000)  # all threads of this process
            times.sort()
            medians.append(statistics.median(times))
            cpus.append(statistics.median(cpu))
            p99s.append(times[int(0.99 * (len(times) - 1))])
        out[mode] = {
            "p50_ms": round(statistics.median(medians), 1),
            "p99_ms": round(statistics.median(p99s), 1),
            "cpu_p50_ms": round(statistics.median(cpus), 1),
            "runs_p50": [round(x, 1) for x in medians],
        }
    qe = []
    for q in QUERIES * 3:
        s = time.perf_counter()
        enc.embed_query(q)
        qe.append((time.perf_counter() - s) * 1000)
    out["query_embedding_p50_ms"] = round(statistics.median(qe), 2)
    from vault_agent.semantic.snapshot_vectors import _cache_for

    cache = _cache_for(reader)
    out["vector_memory_mb"] = round(sum(f.block.nbytes for f in cache.files.values()) / 2**20, 1)
    out["vectors"] = sum(len(f.note) for f in cache.files.values())
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    reader.close()
    return out


def serve_rss(state: Path, vault: Path) -> dict[str, Any]:
    token = "bench-semantic-scale"
    env = {**os.environ, "VAULT_AGENT_INDEX_DIR": str(state), "VAULT_AGENT_TOKEN": token}
    cmd = [str(REPO / ".venv/bin/vault-agent"), "serve", "--vault", str(vault), "--port", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://[\d.]+:\d+", line)
        assert match, line
        url = match.group(0)
        times = []
        for q in QUERIES * 3:
            s = time.perf_counter()
            req = urllib.request.Request(
                f"{url}/search?{urllib.parse.urlencode({'q': q, 'limit': 10})}",
                headers={"Authorization": f"Bearer {token}"},
            )
            with urllib.request.urlopen(req, timeout=600) as r:
                body = json.loads(r.read())
            times.append((time.perf_counter() - s) * 1000)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return {
            "mode": body["data"]["mode"],
            "warnings": [w["code"] for w in body["warnings"]],
            "peak_rss_mb": round(hwm / 1024, 1),
            "rss_mb": round(rss / 1024, 1),
            "http_p50_ms_after_first": round(statistics.median(times[1:]), 1),
            "first_ms": round(times[0], 1),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def http_overhead(state: Path, vault: Path, runs: int) -> dict[str, Any]:
    """What HTTP adds to `search`: the same query, same state, in this process and through
    `vault-agent serve` (loopback, one keep-alive connection), alternated so both see the same
    load; the median of the paired differences per mode."""
    from vault_agent.query.search import SearchRequest, search
    from vault_agent.query.snapshot import SnapshotReader

    token = "bench-http-overhead"
    env = {**os.environ, "VAULT_AGENT_INDEX_DIR": str(state), "VAULT_AGENT_TOKEN": token}
    cmd = [str(REPO / ".venv/bin/vault-agent"), "serve", "--vault", str(vault), "--port", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    settings = Settings(vault=vault, index_dir=state)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    try:
        assert proc.stdout is not None
        match = re.search(r"http://[\d.]+:\d+", proc.stdout.readline())
        assert match
        url = match.group(0)

        import http.client

        host, port = url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=600)  # keep-alive, as an agent's client

        def over_http(q: str, mode: str) -> tuple[float, dict[str, Any]]:
            path = f"/search?{urllib.parse.urlencode({'q': q, 'limit': 10, 'mode': mode})}"
            s = time.perf_counter()
            conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            body = json.loads(conn.getresponse().read())
            return (time.perf_counter() - s) * 1000, body

        def in_process(q: str, mode: str) -> tuple[float, Any]:
            s = time.perf_counter()
            res = search(reader, SearchRequest(q, 10, mode=mode))
            return (time.perf_counter() - s) * 1000, res

        for q in QUERIES:  # warm both sides: engine handles, vectors, model
            over_http(q, "hybrid")
            in_process(q, "hybrid")
        out: dict[str, Any] = {}
        for mode in ("lexical", "hybrid"):
            diffs, https, locs, same = [], [], [], 0
            for _ in range(runs):
                for q in QUERIES:
                    h, body = over_http(q, mode)
                    t, res = in_process(q, mode)
                    same += [r["path"] for r in body["data"]["results"]] == [r.path for r in res.data.results]
                    diffs.append(h - t)
                    https.append(h)
                    locs.append(t)
            out[mode] = {
                "http_p50_ms": round(statistics.median(https), 1),
                "in_process_p50_ms": round(statistics.median(locs), 1),
                "paired_diff_p50_ms": round(statistics.median(diffs), 1),
                "pairs": len(diffs),
                "same_results": same,
            }
        return out
    finally:
        reader.close()
        proc.terminate()
        proc.wait(timeout=60)


def sketch_recall(state: Path, k: int = 50) -> dict[str, Any]:
    """Exact top-k vs sketch + rescore over all vectors of a state, queries = its own
    passages' neighbours are too easy, so real questions: ops/bench/paraphrase-dev.json."""
    from vault_agent.semantic import vectors as V
    from vault_agent.semantic.encoder import load_encoder
    from vault_agent.semantic.store import read_vectors

    if state.suffix == ".pkl":  # the vector cache of bench_granularity.py: real passages
        import pickle

        cache = pickle.loads(state.read_bytes())
        codes, scale = V.quantize(
            np.stack([v.astype(np.float32) for key, v in cache.items() if not key.startswith("q:")])
        )
    else:
        m = read_current_manifest(state)
        assert m is not None
        parts = [
            read_vectors(state / SEGMENTS_DIR / s.files["embeddings_v2"])
            for s in m.segments
            if "embeddings_v2" in s.files
        ]
        codes = np.concatenate([p[1] for p in parts])
        scale = np.concatenate([p[2] for p in parts])
    saved = V.CANDIDATES
    enc = load_encoder()
    assert enc is not None
    sets = json.loads((REPO / "ops/bench/paraphrase-dev.json").read_text())["sets"]
    qs = [enc.embed_query(q["q"]) for s in sets for q in s["queries"]] + [enc.embed_query(q) for q in QUERIES]
    exact = V.dequantize(codes, scale)
    out: dict[str, Any] = {"vectors": len(codes), "k": k, "queries": len(qs)}
    for cand in (100, 200, 500, 1000, 2000, 4000):
        V.CANDIDATES = cand
        block = V.VectorBlock.build(codes, scale)
        overlaps = []
        for q in qs:
            truth = set(np.argsort(-(exact @ q))[:k].tolist())
            [(_, rows, sc)] = V.search([(block, None)], q)
            got = set(rows[np.argsort(-sc)[:k]].tolist())
            overlaps.append(len(truth & got) / k)
        out[f"candidates_{cand}"] = {
            "mean_overlap": round(float(np.mean(overlaps)), 4),
            "min_overlap": round(float(np.min(overlaps)), 3),
        }
    V.CANDIDATES = saved
    return out


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("what", nargs="?", choices=[*MEASUREMENTS])
    ap.add_argument("--state", type=Path, help="required but under --smoke")
    ap.add_argument("--vault", type=Path, default=Path("/work/bench-data/v100k"))
    ap.add_argument("--runs", type=int, default=3)
    args = benchkit.parse(ap, smoke={"runs": 1})
    if not args.smoke and args.what is None:
        ap.error("which measurement (or --smoke)")
    with benchkit.workdir("semantic-scale") as work:
        benchkit.inputs_or_smoke(ap, args, work, "vault", "state", notes=30)
        # --smoke: every measurement, fake-embed first (the others read its vectors)
        for what in MEASUREMENTS if args.smoke else [args.what]:
            before = load()
            out = MEASUREMENTS[what](args)
            out["load_before"], out["load_after"] = before, load()
            print(json.dumps(out, indent=1, ensure_ascii=False))


MEASUREMENTS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "fake-embed": lambda a: fake_embed(a.state, a.vault),
    "latency": lambda a: latency(a.state, a.vault, a.runs),
    "http-overhead": lambda a: http_overhead(a.state, a.vault, a.runs),
    "serve-rss": lambda a: serve_rss(a.state, a.vault),
    "sketch-recall": lambda a: sketch_recall(a.state),
}


if __name__ == "__main__":
    main()
