"""Timing wrappers for bench_savefresh_phases.py's `watch` child (bench only; see that script).

`install(path)` wraps the writer path's functions and registers a `gc.callbacks` hook; every
span and collection is written at once as one JSON line (start/end on the perf_counter
clock, which is CLOCK_MONOTONIC and so shared with the parent process on Linux).
"""

from __future__ import annotations

import functools
import gc
import json
import threading
import time
from typing import Any

_out: Any = None
_lock = threading.Lock()


def _emit(rec: dict[str, Any]) -> None:
    line = json.dumps(rec) + "\n"
    with _lock:
        _out.write(line)


def _wrap(owner: Any, attr: str, name: str) -> None:
    real = getattr(owner, attr)

    @functools.wraps(real)
    def timed(*args: Any, **kwargs: Any) -> Any:
        s, c0 = time.perf_counter(), time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            e = time.perf_counter()
            cpu = (time.thread_time() - c0) * 1000
            _emit({"name": name, "s": s, "e": e, "cpu": cpu, "thread": threading.current_thread().name})

    setattr(owner, attr, timed)


_gc_start: dict[int, float] = {}


def _on_gc(phase: str, info: dict[str, int]) -> None:
    tid = threading.get_ident()
    if phase == "start":
        _gc_start[tid] = time.perf_counter()
        return
    s = _gc_start.pop(tid, None)
    if s is not None:
        _emit(
            {
                "kind": "gc",
                "gen": info["generation"],
                "s": s,
                "e": time.perf_counter(),
                "collected": info.get("collected", 0),
            }
        )


def install(path: str) -> None:
    global _out
    _out = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    from vault_agent import heap
    from vault_agent.indexer import build, compaction, engine, reconcile, search_index, segments, snapshot
    from vault_agent.indexer.eventlog import EventLog
    from vault_agent.indexer.watch_batches import HintBatcher

    _wrap(HintBatcher, "add", "watch: hint")
    _wrap(EventLog, "append", "log append")
    _wrap(EventLog, "read_after", "log read_after")
    _wrap(EventLog, "compact", "log compact")
    _wrap(engine.Writer, "_record", "writer: record batch")
    _wrap(engine.Writer, "_commit", "writer: _commit (all)")
    _wrap(engine.Writer, "_maintain", "writer: maintain")
    _wrap(engine.Writer, "_publish", "writer: writer.json")
    _wrap(engine, "maybe_compact", "maintain: compact")
    _wrap(engine.Writer, "_on_heartbeat", "heartbeat")
    _wrap(engine.Writer, "_on_problem", "PROBLEM: stale, rescan requested")
    _wrap(build.Indexer, "apply", "apply (all)")
    _wrap(build, "scan_vault", "apply: scan_vault")
    _wrap(build, "parse_stream", "apply: parse_stream (generator creation)")
    _wrap(build.Indexer, "_write_segments", "apply: write segments (parse+segment+engine add)")
    _wrap(segments.SegmentWriter, "finish", "apply: segment finish")
    _wrap(search_index.SearchIndexWriter, "add_tables", "apply: engine add")
    _wrap(build.Indexer, "commit_snapshot", "commit_snapshot (all)")
    _wrap(search_index.SearchIndexWriter, "freeze", "commit: engine freeze")
    _wrap(build, "before_publish", "commit: before_publish")
    _wrap(build, "commit", "commit: manifest+CURRENT")
    _wrap(snapshot.GarbageCollector, "collect", "gc collect (files)")
    _wrap(reconcile, "scan_vault", "reconcile: scan_vault")
    _wrap(compaction, "plan", "compaction plan")
    _wrap(heap, "release_free_memory", "heap: malloc_trim")
    gc.callbacks.append(_on_gc)
