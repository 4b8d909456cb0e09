#!/usr/bin/env python3
"""Sustained editing: do reads degrade while an editor saves one note every 0.2 s?

    .venv/bin/python ops/bench/bench_sustained.py [--notes 10000] [--minutes 10]
        [--idle-s 60] [--edit-every 0.2] [--workdir DIR] [--semantic on|off]
        [--worker-nice N] [--code OTHER_CHECKOUT]

Setup: `ops/gen_vault.py` (deterministic) into a temp dir, a full index (a catch-up when
--workdir already holds one), with --semantic on (the default, what users run) every note
embedded in the foreground (`index --embed`), then the first queries (warm), then one
in-process live writer with its watcher (`build_context(watch=True)`, what `serve
--watch` runs), whose embedder (a niced worker process) re-embeds every edited note.
1. idle: two query threads (`overview`, `search` with a rotating query, default mode:
   hybrid when embedded) for --idle-s, every note embedded, nothing to do: the baseline;
2. sustained: an "editor" thread rewrites a random note on disk (not through the write
   tools: the watcher path) every --edit-every seconds for --minutes, queries continuing.
Every 5 s a sampler records live segments (CURRENT manifest), files under segments/ and
snapshots/, and the state dir's size. Reports p50/p99 of each query over the idle phase
and over the last 2 minutes of editing (the last 40% when shorter), their ratio, and the
max/last samples, and (semantic on) the passages the embedder computed during the edits
and the share embedded at the end. Prints JSON lines; the last one is the summary. Issue 20's
target: search and overview p99 over the edits at most 3x idle, with embeddings on.

Side by side: `--code OTHER_CHECKOUT` runs that checkout's vault_agent under this bench (an
older one embeds with its own background writer during setup); run both on one --workdir.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# --code DIR: measure another checkout's code with this bench (a side by side: run it once
# per checkout on the same --workdir); read before anything imports vault_agent.
CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv else REPO
sys.path.insert(0, str(CODE))

import benchkit  # noqa: E402

from vault_agent.api.invoke import body_of, invoke  # noqa: E402
from vault_agent.api.operation import AppContext  # noqa: E402
from vault_agent.api.ops import CATALOG  # noqa: E402
from vault_agent.config import Settings  # noqa: E402
from vault_agent.contracts import SEGMENTS_DIR, SNAPSHOTS_DIR  # noqa: E402
from vault_agent.freshness import read_current_manifest  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.server.context import build_context, close_context  # noqa: E402

try:
    from vault_agent.semantic.progress import semantic_state
except ImportError:  # --code of a checkout before issue 22
    from vault_agent.semantic.query import semantic_state  # type: ignore[no-redef,attr-defined]

QUERIES = ["project plan", "meeting notes", "pipeline", "budget review", "garden", "kernel module"]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def _call(ctx: AppContext, name: str, **raw: Any) -> None:
    op = CATALOG.named(name)
    body_of(op, invoke(op, ctx, raw))


def _dir_stats(state: Path) -> dict[str, int]:
    # Each file once (the engine's snapshot dirs hard-link the same files), and files GC
    # deletes during the walk skipped, not fatal to the sampler.
    seen: dict[tuple[int, int], int] = {}
    for root, _, files in os.walk(state):
        for name in files:
            try:
                st = os.stat(os.path.join(root, name))
            except FileNotFoundError:
                continue
            seen[(st.st_dev, st.st_ino)] = st.st_size
    size = sum(seen.values())
    seg = len(os.listdir(state / SEGMENTS_DIR)) if (state / SEGMENTS_DIR).exists() else 0
    snaps = len(os.listdir(state / SNAPSHOTS_DIR)) if (state / SNAPSHOTS_DIR).exists() else 0
    manifest = read_current_manifest(state)
    return {
        "live_segments": len(manifest.segments) if manifest else 0,
        "segment_files": seg,
        "manifest_files": snaps,
        "state_bytes": size,
    }


def main(argv: list[str] | None = None) -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--idle-s", type=float, default=60.0)
    ap.add_argument("--edit-every", type=float, default=0.2)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--semantic", choices=["on", "off"], default="on")
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout whose vault_agent is measured")
    ap.add_argument(
        "--worker-nice",
        type=int,
        default=None,
        help="the embedding worker's nice value (default: the product's, 10)",
    )
    args = benchkit.parse(
        ap, smoke={"notes": 30, "minutes": 0.1, "idle_s": 2.0, "semantic": "off"}, argv=argv
    )
    os.environ["VAULT_AGENT_SEMANTIC"] = args.semantic
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-sustained-"))
    vault, state = work / "vault", work / "state"
    benchkit.generated_vault(vault, args.notes)
    settings = Settings(vault=vault, index_dir=state)
    t0 = time.perf_counter()
    build_index(settings, full=not state.exists())  # a kept --workdir: catch up (embeddings kept)
    print(json.dumps({"setup": "index", "notes": args.notes, "seconds": round(time.perf_counter() - t0, 1)}))
    manifest = read_current_manifest(state)
    assert manifest is not None
    if args.semantic == "on" and semantic_state(manifest, load_model=False).pending:
        t0 = time.perf_counter()
        try:
            build_index(settings, embed=lambda done, total, eta: None)
        except TypeError:  # code before `index --embed`: its writer embeds in the background
            from vault_agent.indexer.engine import Writer

            with Writer(settings, watch=False):
                while semantic_state(read_current_manifest(state), load_model=False).pending:  # type: ignore[arg-type]
                    time.sleep(1.0)
        manifest = read_current_manifest(state)
        assert manifest is not None
        share = semantic_state(manifest, load_model=False).share
        print(json.dumps({"setup": "embed", "share": share, "seconds": round(time.perf_counter() - t0, 1)}))
    benchkit.report({"setup": "load"})
    notes = sorted(p for p in vault.rglob("*.md"))
    ctx = build_context(settings, watch=True)
    stop = threading.Event()
    editing = threading.Event()
    samples: dict[str, list[tuple[float, float]]] = {"overview": [], "search": []}
    stats: list[dict[str, Any]] = []
    edits = [0]

    def query(name: str) -> None:
        i = 0
        while not stop.is_set():
            start = time.perf_counter()
            if name == "overview":
                _call(ctx, "overview")
            else:
                _call(ctx, "search", q=QUERIES[i % len(QUERIES)])
            samples[name].append((time.monotonic(), (time.perf_counter() - start) * 1000))
            i += 1

    def editor() -> None:
        rng = random.Random(1)
        next_at = time.monotonic()
        while not stop.is_set():
            if editing.is_set():
                path = rng.choice(notes)
                text = path.read_text(encoding="utf-8")
                path.write_text(text + f"\nedit {edits[0]} {rng.random()}\n", encoding="utf-8")
                edits[0] += 1
            next_at += args.edit_every
            stop.wait(max(0.0, next_at - time.monotonic()))

    def sampler() -> None:
        while not stop.wait(5.0):
            row = {"t": round(time.monotonic() - started, 1), "edits": edits[0], **_dir_stats(state)}
            stats.append(row)
            print(json.dumps(row), flush=True)

    embedder = ctx.writer._semantic if ctx.writer is not None else None
    if embedder is not None and args.worker_nice is not None:
        # taken by the next worker it starts (none runs while all is embedded)
        embedder.worker.nice = args.worker_nice
    embedded_before = [0]
    # Warm first (the first search loads the snapshot, its vectors and the model): the idle
    # phase is the steady state, not a cold start (bench_first_answer.py measures that).
    t0 = time.perf_counter()
    _call(ctx, "overview")
    _call(ctx, "search", q=QUERIES[0])
    print(json.dumps({"setup": "first queries", "seconds": round(time.perf_counter() - t0, 1)}))
    started = time.monotonic()
    threads = [threading.Thread(target=query, args=(n,), daemon=True) for n in samples]
    threads += [threading.Thread(target=editor, daemon=True), threading.Thread(target=sampler, daemon=True)]
    try:
        for t in threads:
            t.start()
        stop.wait(args.idle_s)
        idle_end = time.monotonic()
        embedded_before[0] = getattr(embedder, "passages_embedded", 0)
        editing.set()
        stop.wait(args.minutes * 60)
        end = time.monotonic()
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        final = read_current_manifest(state)
        embedder_stats = (
            {
                "passages_embedded_during_edits": getattr(embedder, "passages_embedded", 0)
                - embedded_before[0],
                "worker_restarts": getattr(embedder, "restarts", None),
                "share_at_end": semantic_state(final, load_model=False).share if final else None,
            }
            if embedder is not None
            else {}
        )
        close_context(ctx)
    tail_s = min(120.0, 0.4 * (end - idle_end))
    summary: dict[str, Any] = {
        "semantic": args.semantic,
        "worker_nice": getattr(embedder, "nice", None),
        **embedder_stats,
        "notes": args.notes,
        "minutes": args.minutes,
        "edit_every_s": args.edit_every,
        "edits": edits[0],
        "tail_s": tail_s,
    }
    for name, rows in samples.items():
        idle = [ms for t, ms in rows if t < idle_end]
        tail = [ms for t, ms in rows if end - tail_s <= t < end]
        summary[name] = {
            "idle_p50": round(_pct(idle, 0.5), 1),
            "idle_p99": round(_pct(idle, 0.99), 1),
            "tail_p50": round(_pct(tail, 0.5), 1),
            "tail_p99": round(_pct(tail, 0.99), 1),
            "p99_ratio": round(_pct(tail, 0.99) / max(_pct(idle, 0.99), 1e-6), 2),
            "n_idle": len(idle),
            "n_tail": len(tail),
        }
    summary |= _state_growth([r for r in stats if r["edits"] > 0])
    benchkit.report({"summary": summary})
    return 0


def _state_growth(editing_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Largest and last state-dir figures sampled while the editor ran."""
    out: dict[str, Any] = {}
    for key in ("live_segments", "segment_files", "manifest_files", "state_bytes"):
        out[f"max_{key}"] = max((r[key] for r in editing_rows), default=0)
        out[f"last_{key}"] = editing_rows[-1][key] if editing_rows else 0
    return out


if __name__ == "__main__":
    raise SystemExit(main())
