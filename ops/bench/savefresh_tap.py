"""Timing wrappers for bench_savefresh_phases.py's `watch` child (bench only; see that script).

`install(path)` wraps the writer path's functions and registers a `gc.callbacks` hook; every
span and collection is written at once as one JSON line (start/end on the perf_counter
clock, which is CLOCK_MONOTONIC and so shared with the parent process on Linux).
"""

from __future__ import annotations

import gc
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import benchkit

_out: Any = None
_lock = threading.Lock()


def _emit(rec: dict[str, Any]) -> None:
    line = json.dumps(rec) + "\n"
    with _lock:
        _out.write(line)


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
    from vault_agent.indexer import build, compaction, engine, reconcile, segment_build, writer_faults
    from vault_agent.indexer.eventlog import EventLog
    from vault_agent.indexer.watch_batches import HintBatcher

    spans = benchkit.Spans(_emit)
    phases: list[tuple[object, Callable[..., Any], str]] = [
        *benchkit.writer_phases(),
        (HintBatcher, HintBatcher.add, "watch: hint"),
        (EventLog, EventLog.read_after, "log read_after"),
        (EventLog, EventLog.compact, "log compact"),
        (build.Indexer, build.Indexer.compact, "maintain: compact"),
        (engine.Writer, engine.Writer._on_heartbeat, "heartbeat"),
        (
            writer_faults.WriterFaults,
            writer_faults.WriterFaults.on_problem,
            "PROBLEM: stale, rescan requested",
        ),
        (segment_build, segment_build.parse_stream, "apply: parse_stream (generator creation)"),
        (build.Indexer, build.Indexer._write_segments, "apply: write segments (parse+segment+engine add)"),
        (reconcile, reconcile.scan_vault, "reconcile: scan_vault"),
        (compaction, compaction.plan, "compaction plan"),
        (heap, heap.release_free_memory, "heap: malloc_trim"),
    ]
    for owner, function, label in phases:
        spans.wrap(owner, function, label)
    gc.callbacks.append(_on_gc)
