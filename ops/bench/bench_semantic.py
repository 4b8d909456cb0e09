"""Semantic search quality, embedding throughput, query latency and memory.

    .venv/bin/python ops/bench/bench_semantic.py quality            # dev set + CJK set
    .venv/bin/python ops/bench/bench_semantic.py throughput --notes 10000 --work /tmp/bench-sem [--threads 2]
    .venv/bin/python ops/bench/bench_semantic.py latency --notes 100000 --runs 3
    .venv/bin/python ops/bench/bench_semantic.py serve-watch --vault /work/bench-data/v10k --work /work/bench-data/state-x [--threads 2]

quality: indexes shared/corpora/obsidian-tasks-docs (retrieval-dev.json) and
fixtures/semantic (fixtures/semantic-queries.json) in a temporary state dir, lets a real
writer embed them, then reports recall@1/@3/@5/@10 over distinct notes per query kind
for lexical (today's BM25 `search`), semantic (`semantic_search`) and hybrid (`rrf` of
both). throughput: a generated vault (ops/gen_vault.py, seed 1), lexical index first, then
the writer's background embedder timed from its start to full coverage (wall and CPU).
latency: query-embedding time and top-k (sketch + exact rescoring, vectors.py) over N
vectors (random unit vectors: the cost does not depend on the content), median of --runs runs of 200 queries each, and
the matrix's memory. serve-watch: the product end to end: `cp -a` of --vault into --work,
a fresh state dir, `vault-agent serve --watch` started on it; the manifest is polled (what
`status --verbose` reports as embeddedShare) and the serve process's CPU (utime + stime
from /proc, all its threads) is read at the lexical commit (every note indexed) and when
embeddedShare reaches 1.0. Prints JSON with `uptime` load. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import benchkit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.freshness import read_current_manifest, vault_for_settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.indexer.engine import Writer  # noqa: E402
from vault_agent.query.search import SearchRequest, search  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.semantic import rrf, semantic_search, semantic_state  # noqa: E402
from vault_agent.semantic.encoder import load_encoder  # noqa: E402
from vault_agent.semantic.settings import THREADS_ENV, embed_threads  # noqa: E402
from vault_agent.semantic.store import TABLE  # noqa: E402
from vault_agent.semantic.vectors import VectorBlock, quantize  # noqa: E402
from vault_agent.semantic.vectors import search as vector_search  # noqa: E402

SHARED = REPO.parent / "shared"
SETS = [
    (SHARED / "corpora" / "obsidian-tasks-docs" / "vault", SHARED / "bench" / "retrieval-dev.json"),
    (REPO / "fixtures" / "semantic", REPO / "fixtures" / "semantic-queries.json"),
]
DEPTH = 50  # candidates per list before fusion
CUTS = (1, 3, 5, 10)
QUERIES_PER_RUN = 100


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def embed_all(settings: Settings, timeout_s: float = 3600) -> dict[str, float]:
    """Run a real writer until every note is embedded; wall and CPU seconds (this process and
    its embedding worker, counted once the writer has stopped and waited for it)."""
    t0, c0 = time.perf_counter(), time.process_time() + _children_cpu_s()
    done = threading.Event()
    with Writer(settings, watch=False):
        t_lex = time.perf_counter() - t0
        while not done.wait(0.2):
            m = read_current_manifest(settings.index_dir)
            if m is not None and not semantic_state(m).pending:
                break
            if time.perf_counter() - t0 > timeout_s:
                raise TimeoutError("embeddings did not catch up")
    wall_s = time.perf_counter() - t0 - t_lex
    return {"wall_s": round(wall_s, 2), "cpu_s": round(time.process_time() + _children_cpu_s() - c0, 2)}


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def recall_table(ranks: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode, by_kind in ranks.items():
        for kind, rs in by_kind.items():
            arr = np.array(rs)
            out.setdefault(kind, {})[mode] = {f"r@{c}": round(float((arr < c).mean()), 2) for c in CUTS}
            out[kind]["n"] = len(rs)
    return out


def first_rank(paths: list[str], targets: list[str]) -> int:
    seen: list[str] = []
    for p in paths:
        if p not in seen:
            seen.append(p)
    return next((i for i, p in enumerate(seen) if p in targets), 99)


def quality() -> dict[str, Any]:
    result: dict[str, Any] = {}
    for vault_src, qfile in SETS:
        queries = json.loads(qfile.read_text(encoding="utf-8"))["queries"]
        with tempfile.TemporaryDirectory() as tmp:
            vault = Path(tmp) / "vault"
            shutil.copytree(vault_src, vault)
            settings = Settings(vault=vault, index_dir=Path(tmp) / "state")
            build_index(settings, full=True)
            cost = embed_all(settings)
            reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
            ranks: dict[str, dict[str, list[int]]] = {"lexical": {}, "semantic": {}, "hybrid": {}}
            try:
                for q in queries:
                    lex_res = search(reader, SearchRequest(q["q"], limit=DEPTH)).data.results
                    lexical = [(r.path, r.start_line, r.score) for r in lex_res]
                    with reader.acquire() as view:
                        found = semantic_search(reader, view, q["q"], DEPTH)
                        sem = found.hits if found is not None else []
                    # semantic hits carry a chunk ordinal, lexical ones a start line: both
                    # only need to identify a chunk of the note for fusion and recall.
                    hybrid = [h.hit for h in rrf(lexical, sem, DEPTH)]
                    for mode, hits in (("lexical", lexical), ("semantic", sem), ("hybrid", hybrid)):
                        rank = first_rank([h[0] for h in hits], q["targets"])
                        ranks[mode].setdefault(q["kind"], []).append(rank)
            finally:
                reader.close()
        result[qfile.name] = {"recall": recall_table(ranks), "embedding": cost}
    return result


def throughput(notes: int, work: Path) -> dict[str, Any]:
    vault, state = work / f"vault-{notes}", work / f"state-{notes}"
    if not vault.exists():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "ops" / "gen_vault.py"),
                str(vault),
                "--notes",
                str(notes),
                "--seed",
                "1",
            ],
            check=True,
        )
    if state.exists():
        shutil.rmtree(state)
    settings = Settings(vault=vault, index_dir=state)
    t0 = time.perf_counter()
    build_index(settings, full=True)
    lexical_s = time.perf_counter() - t0
    cost = embed_all(settings)
    m = read_current_manifest(state)
    assert m is not None
    emb_bytes = sum((state / "segments" / s.files[TABLE]).stat().st_size for s in m.segments)
    passages = sum(pq.read_metadata(state / "segments" / s.files[TABLE]).num_rows for s in m.segments)
    return {
        "notes": m.note_count,
        "lexical_index_s": round(lexical_s, 1),
        "embedding": cost,
        "ms_per_note_wall": round(cost["wall_s"] / max(m.note_count, 1) * 1000, 2),
        "embedding_files_mb": round(emb_bytes / 2**20, 1),
        "embed_threads": embed_threads(),
        "passages": passages,
        "passages_per_note": round(passages / max(m.note_count, 1), 2),
    }


def latency(notes: int, runs: int) -> dict[str, Any]:
    enc = load_encoder()
    assert enc is not None
    rng = np.random.default_rng(1)
    # The product's vector block (vectors.py: int8 codes + scale + float32 sketch) over
    # random unit vectors: the search cost does not depend on their values.
    codes = np.empty((notes, enc.dim), np.int8)
    scale = np.empty(notes, np.float32)
    for start in range(0, notes, 20_000):
        v = rng.standard_normal((min(20_000, notes - start), enc.dim), dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        codes[start : start + len(v)], scale[start : start + len(v)] = quantize(v)
    block = VectorBlock.build(codes, scale)
    qs = [json.loads(q.read_text(encoding="utf-8"))["queries"] for _, q in SETS]
    texts = [q["q"] for qq in qs for q in qq]
    # Wall and CPU time: on a machine shared by other jobs the wall time says more about
    # the neighbours than about us; the CPU time of this one thread is what a quiet core pays.
    cols: dict[str, list[float]] = {k: [] for k in ("embed_wall", "embed_cpu", "topk_wall", "topk_cpu")}
    for _ in range(runs):
        run: dict[str, list[float]] = {k: [] for k in cols}
        for i in range(QUERIES_PER_RUN):
            s, sc = time.perf_counter(), time.thread_time()
            v = enc.embed_query(texts[i % len(texts)])
            m, mc = time.perf_counter(), time.thread_time()
            [(_, rows, scores)] = vector_search([(block, None)], v)
            rows[np.argsort(-scores)[:50]]
            run["embed_wall"].append((m - s) * 1000)
            run["embed_cpu"].append((mc - sc) * 1000)
            run["topk_wall"].append((time.perf_counter() - m) * 1000)
            run["topk_cpu"].append((time.thread_time() - mc) * 1000)
        for k in cols:
            cols[k].append(statistics.median(run[k]))
    return {
        "notes": notes,
        **{f"{k}_ms_p50": round(statistics.median(v), 2) for k, v in cols.items()},
        "vector_memory_mb": round(block.nbytes / 2**20, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _proc_cpu_s(pid: int) -> float:
    """utime + stime of a process and its live descendants (serve's embedding worker)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in task.read_text().split():
            try:
                total += _proc_cpu_s(int(child))
            except (OSError, IndexError):
                continue  # it just exited
    return total


def serve_watch(vault: Path, work: Path, timeout_s: float = 7200) -> dict[str, Any]:
    """Embeddings in the background of `serve --watch`: lexical commit → embeddedShare 1.0."""
    import re

    copy, state = work / "vault", work / "state"
    for d in (copy, state):
        if d.exists():
            shutil.rmtree(d)
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(vault), str(copy)], check=True)  # never hard links
    on_disk = sum(1 for _ in copy.rglob("*.md"))
    env = {**os.environ, "VAULT_AGENT_INDEX_DIR": str(state), "VAULT_AGENT_TOKEN": "bench-serve-watch"}
    cmd = [str(REPO / ".venv/bin/vault-agent"), "serve", "--watch", "--vault", str(copy), "--port", "0"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out: dict[str, Any] = {"notes_on_disk": on_disk, "embed_threads": embed_threads()}
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert re.search(r"http://[\d.]+:\d+", line), line
        out["listening_s"] = round(time.perf_counter() - t0, 1)
        t_lex = c_lex = None
        while True:
            if proc.poll() is not None:
                raise RuntimeError("serve exited")
            m = read_current_manifest(state)
            now = time.perf_counter()
            if m is not None and t_lex is None and m.note_count >= on_disk:
                t_lex, c_lex = now, _proc_cpu_s(proc.pid)
                out["lexical_commit_s"] = round(t_lex - t0, 1)
                out["cpu_to_lexical_s"] = round(c_lex, 1)
            if t_lex is not None and m is not None:
                st = semantic_state(m, load_model=False)
                if st.share >= 1.0:
                    assert c_lex is not None
                    out["embed_wall_s"] = round(now - t_lex, 1)
                    out["embed_cpu_s"] = round(_proc_cpu_s(proc.pid) - c_lex, 1)
                    out["embedded_notes"] = st.embedded_notes
                    break
            if now - t0 > timeout_s:
                raise TimeoutError("embeddings did not catch up")
            time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    verbose = subprocess.run(
        [str(REPO / ".venv/bin/vault-agent"), "status", "--verbose", "--json", "--vault", str(copy)],
        env=env,
        capture_output=True,
        text=True,
    )
    try:
        out["status_embedded_share"] = json.loads(verbose.stdout)["data"]["details"]["embeddedShare"]
    except (ValueError, KeyError, TypeError):
        out["status_embedded_share"] = None
    out["ms_cpu_per_note"] = round(out["embed_cpu_s"] / max(out["embedded_notes"], 1) * 1000, 1)
    shutil.rmtree(copy)
    return out


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("what", nargs="?", choices=["quality", "throughput", "latency", "serve-watch"])
    ap.add_argument("--vault", type=Path, default=Path("/work/bench-data/v10k"))
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="embedder threads (default: the product's)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-semantic")
    args = benchkit.parse(ap, smoke={"notes": 20, "runs": 1})
    if args.threads:
        os.environ[THREADS_ENV] = str(args.threads)
    if not args.smoke and args.what is None:
        ap.error("which measurement (or --smoke)")
    with benchkit.workdir("semantic") as work:
        for what in ["throughput", "latency"] if args.smoke else [args.what]:
            args.what, args.work = what, work if args.smoke else args.work
            _measure(args)


def _measure(args: argparse.Namespace) -> None:
    load_before = load()
    if args.what == "quality":
        out = quality()
    elif args.what == "throughput":
        args.work.mkdir(parents=True, exist_ok=True)
        out = throughput(args.notes, args.work)
    elif args.what == "serve-watch":
        out = serve_watch(args.vault, args.work)
    else:
        out = latency(args.notes, args.runs)
    out["load_before"], out["load_after"] = load_before, load()
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
