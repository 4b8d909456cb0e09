#!/usr/bin/env python3
"""Heap profile of `serve --watch` in one process: what grows with every commit?

    nice .venv/bin/python ops/bench/heap_profile.py --workdir /work/steady-data/longrun --commits 1000 --every 100
    nice .venv/bin/python ops/bench/heap_profile.py --notes 2000 --commits 300 --every 50 --semantic off
    .venv/bin/python ops/bench/heap_profile.py --smoke

The real components, composed as `serve --watch` composes them (`server.context.
build_context(watch=True)`: the engine's writer with its watcher, the snapshot reader with
its preloads, the query model when --semantic is on; Arrow's C++ pool chosen as the server
commands choose it, arrow_pool_env.py), on a fresh copy of an indexed vault:
bench_longrun.py's base under --workdir (`base-<notes>-<semantic>`, embedded) when there,
else a generated vault indexed here (not embedded: with --semantic on, the embedder then
works through the whole vault during the run). Then --commits times: append a line to a
random note, wait for the commit that holds it, and send one request of the mix (search,
overview, vault_query by tag and sort, read, vault_query by a property), the next one each
commit, through the operation catalog as HTTP and MCP do.

Every --every commits one JSON line: RSS (anonymous and file-backed), threads, open fds;
Python allocations traced by `tracemalloc` (numpy's too) and the lines that grew most since
the last sample; Arrow's pool (bytes allocated, backend); glibc's `mallinfo2` (in use,
free in the arenas, mmapped); DuckDB (generations, memory by `duckdb_memory()`, objects);
the reader's own counts (`held()`), its vocabularies, every per-reader cache of the query
modules (`PerOwner`: the length of each of its containers) and every module-level container
and `lru_cache` of vault_agent. The last line: the growth of each figure from the first
sample (after --warmup commits) to the last, and the containers that grew. What grows with
commits there is a retention; what is flat is bounded.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import json
import os
import random
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import benchkit


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _mallinfo() -> dict[str, float]:
    """glibc's heap: in use (arenas + mmapped chunks) and free in the arenas, MB ({} elsewhere)."""
    try:
        fn = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = _MallInfo2
    info = fn()
    mb = 1 / (1 << 20)
    return {
        "in_use_mb": round((info.uordblks + info.hblkhd) * mb, 1),
        "free_mb": round(info.fordblks * mb, 1),
        "mmapped_mb": round(info.hblkhd * mb, 1),
    }


def _status() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[f"{key}_mb"] = round(int(value.split()[0]) / 1024, 1)
        elif key == "Threads":
            out["threads"] = int(value)
    out["fds"] = len(os.listdir("/proc/self/fd"))
    return out


def _arrow() -> dict[str, Any]:
    import pyarrow as pa

    pool = pa.default_memory_pool()
    return {
        "allocated_mb": round(pa.total_allocated_bytes() / (1 << 20), 1),
        "pool": pool.backend_name,
        "pool_max_mb": round(pool.max_memory() / (1 << 20), 1) if pool.max_memory() else None,
        "io_threads": pa.io_thread_count(),
    }


def _duckdb(reader: Any) -> dict[str, Any]:
    stores = reader._stores  # noqa: SLF001 - white box: what the reader's databases hold
    gens = list(dict.fromkeys([*stores._users, stores.current]))  # noqa: SLF001
    memory = objects = 0
    for store in gens:
        if store.closed:
            continue
        con = store.db.cursor()
        try:
            memory += con.execute(
                "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()"
            ).fetchone()[0]
            objects += con.execute(
                "SELECT (SELECT count(*) FROM duckdb_tables()) + (SELECT count(*) FROM duckdb_views() WHERE NOT internal)"
            ).fetchone()[0]
        finally:
            con.close()
    return {"generations": len(gens), "memory_mb": round(memory / (1 << 20), 1), "objects": objects}


def _sizes(value: Any) -> dict[str, int]:
    """The length of every container attribute of a cache object (one level)."""
    attrs = vars(value) if hasattr(value, "__dict__") else {}
    if hasattr(value, "__len__") and not attrs:
        return {"len": len(value)}
    return {k: len(v) for k, v in attrs.items() if isinstance(v, (dict, list, set, tuple, frozenset))}


def _containers() -> dict[str, int]:
    """Module-level containers, per-owner caches and lru_caches of vault_agent: name → size."""
    from vault_agent.per_owner import PerOwner

    out: dict[str, int] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("vault_agent") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            where = f"{name}.{attr}"
            if isinstance(value, PerOwner):
                for owner, item in list(value._items.items()):  # noqa: SLF001 - every owner's cache
                    for key, size in _sizes(item).items():
                        name = f"{where}[{type(owner).__name__}].{key}"
                        out[name] = out.get(name, 0) + size
            elif isinstance(value, (dict, list, set)) and not attr.startswith("__"):
                out[where] = len(value)
            elif isinstance(value, functools._lru_cache_wrapper):
                out[f"{where}()"] = value.cache_info().currsize
    return out


def _changed(last: dict[str, int], now: dict[str, int]) -> dict[str, int]:
    """The containers whose size changed since the last sample (all of them the first time),
    with their size now; `last` becomes `now`."""
    out = {k: v for k, v in now.items() if last.get(k) != v}
    last.clear()
    last.update(now)
    return out


def _reader(ctx: Any) -> dict[str, Any]:
    reader = ctx.reader
    vocabs = reader._stores.catalog.vocabs  # noqa: SLF001
    return {
        **reader.held(),
        "vocab_folders": len(vocabs.folders),
        **{f"vocab_{k}": len(v) for k, v in vocabs.lists.items()},
        "snapshot_cache": len(ctx.snapshot_cache),
    }


def _where(frame: tracemalloc.Frame) -> str:
    return f"{frame.filename.split('site-packages/')[-1].split('/wt/')[-1]}:{frame.lineno}"


def _grown_lines(before: tracemalloc.Snapshot | None, now: tracemalloc.Snapshot, top: int) -> list[Any]:
    """The allocation sites that grew most since `before`: [line, KB, objects], and with
    --frames > 1 the innermost vault_agent line that led there (who keeps it)."""
    if before is None:
        return []
    by = "traceback" if now.traces and len(now.traces[0].traceback) > 1 else "lineno"
    out: list[Any] = []
    for d in [d for d in now.compare_to(before, by) if d.size_diff > 0][:top]:
        frames = list(reversed(d.traceback))  # the innermost first
        ours = [f for f in frames if "vault_agent/" in f.filename]
        via = [_where(ours[0])] if ours and ours[0] is not frames[0] else []
        out.append([_where(frames[0]), round(d.size_diff / 1024, 1), d.count_diff, *via])
    return out


def _traced() -> tracemalloc.Snapshot:
    return tracemalloc.take_snapshot().filter_traces(
        [
            tracemalloc.Filter(False, tracemalloc.__file__),
            tracemalloc.Filter(False, "<frozen importlib._bootstrap*"),
        ]
    )


# ------------------------------------------------------------------ the run
def _prepared(args: Any, work: Path) -> tuple[Path, Path]:
    """(vault, state) of a fresh copy of the base (bench_longrun's, else one indexed here)."""
    base = (args.workdir or work) / f"base-{args.notes}-{args.semantic}"
    if not (base / "ready").exists():
        from vault_agent.indexer.build import build_index

        base = work / "generated"
        vault = benchkit.generated_vault(base / "vault", args.notes)
        build_index(benchkit.settings_for(vault, base / "state", semantic=False), full=True)
    run = work / "run"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    subprocess.run(["cp", "-a", str(base / "vault"), str(base / "state"), str(run)], check=True)
    return run / "vault", run / "state"


def _requests(notes: list[str]) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(7)
    return [
        ("search", {"q": rng.choice(["project plan", "meeting notes", "pipeline", "garden"])}),
        ("overview", {}),
        ("query", {"tags": ["project"], "sort": "-mtime", "limit": 20}),
        ("read", {"path": rng.choice(notes), "full": True}),
        ("query", {"where": [{"field": "status", "op": "=", "value": "active"}], "limit": 20}),
    ]


def _measure(args: Any, work: Path) -> None:
    from vault_agent.api.invoke import invoke
    from vault_agent.api.ops import CATALOG
    from vault_agent.indexer.eventlog import NewEvent
    from vault_agent.server.context import build_context, close_context

    vault, state = _prepared(args, work)
    if args.mmap_threshold:  # glibc's M_MMAP_THRESHOLD: fixed, so no longer raised by frees
        ctypes.CDLL("libc.so.6").mallopt(-3, args.mmap_threshold)
    settings = benchkit.settings_for(vault, state, semantic=args.semantic == "on")
    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    tracemalloc.start(args.frames)
    ctx = build_context(settings, watch=True)
    if args.arrow_io_threads:  # after the reader set its own (heap.ARROW_IO_THREADS)
        import pyarrow as pa

        pa.set_io_thread_count(args.arrow_io_threads)
    rng = random.Random(1)
    samples: list[dict[str, Any]] = []
    before: tracemalloc.Snapshot | None = None
    sizes: dict[str, int] = {}
    t0 = time.perf_counter()
    try:
        assert ctx.writer is not None
        for k in range(1, args.commits + 1):
            rel = rng.choice(notes)
            with open(vault / rel, "a", encoding="utf-8") as f:
                f.write(f"\nedit {k} pipeline garden\n")
            seq = ctx.writer.append([NewEvent("upsert", rel, origin="tool")])
            if ctx.writer.wait_for_seq(seq, 120) is None:
                raise TimeoutError(f"commit {k} did not come")
            name, raw = _requests(notes)[k % 5]
            invoke(CATALOG.named(name), ctx, raw)
            if k % args.every == 0 or k == args.commits:
                ctx.reader.settle()
                gc.collect()
                now = _traced()
                sample = {
                    "commit": k,
                    "s": round(time.perf_counter() - t0, 1),
                    **_status(),
                    "traced_mb": round(tracemalloc.get_traced_memory()[0] / (1 << 20), 1),
                    "malloc": _mallinfo(),
                    "arrow": _arrow(),
                    "duckdb": _duckdb(ctx.reader),
                    "reader": _reader(ctx),
                    "containers_changed": _changed(sizes, full := _containers()),
                    "grown_lines_kb": _grown_lines(before, now, args.top),
                }
                before = now
                print(json.dumps(sample), flush=True)
                samples.append({**sample, "containers": full})
    finally:
        close_context(ctx)
        tracemalloc.stop()
    _summary(args, samples)


def _flat(sample: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in sample.items():
        if isinstance(value, dict):
            for sub, v in _flat(value).items():
                out[f"{key}.{sub}"] = v
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    return out


def _summary(args: Any, samples: list[dict[str, Any]]) -> None:
    """Growth of every figure from the first sample after --warmup commits to the last."""
    after = [s for s in samples if s["commit"] >= args.warmup] or samples
    first, last = _flat(after[0]), _flat(after[-1])
    skip = ("commit", "s", "VmHWM_mb", "containers_changed")
    growth = {
        k: round(last[k] - first.get(k, 0), 1)
        for k in last
        if not k.startswith(skip) and last[k] != first.get(k, 0)
    }
    benchkit.report({
        "summary": "heap_profile", "notes": args.notes, "semantic": args.semantic, "commits": args.commits,
        "from_commit": after[0]["commit"], "to_commit": after[-1]["commit"],
        "rss_mb": [s["VmRSS_mb"] for s in samples], "anon_mb": [s["RssAnon_mb"] for s in samples],
        "growth": growth,
    })  # fmt: skip


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--workdir", type=Path, default=None, help="bench_longrun.py's: its base is reused")
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--semantic", choices=["on", "off"], default="on")
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--every", type=int, default=100, help="commits between samples")
    ap.add_argument("--warmup", type=int, default=100, help="commits before the growth is counted")
    ap.add_argument("--frames", type=int, default=1, help="tracemalloc's frames per allocation")
    ap.add_argument("--top", type=int, default=8, help="grown lines per sample")
    ap.add_argument("--arrow-io-threads", type=int, default=0, help="pa.set_io_thread_count (0: serve's)")
    ap.add_argument("--mmap-threshold", type=int, default=0, help="glibc M_MMAP_THRESHOLD bytes (0: glibc's)")
    args = benchkit.parse(ap, smoke={"notes": 30, "commits": 6, "every": 3, "warmup": 0, "semantic": "off"})
    # As `vault-agent serve` does before pyarrow loads (cli/main.py); ARROW_DEFAULT_MEMORY_POOL
    # in the environment still wins (=mimalloc measures Arrow's default).
    from vault_agent.arrow_pool_env import prefer_system_arrow_pool

    prefer_system_arrow_pool("serve", os.environ)
    with benchkit.workdir("heap-profile") as work:
        _measure(args, work)


if __name__ == "__main__":
    main()
