"""Process heap hygiene for the readers: few malloc arenas, one C heap for Arrow, and freed
pages given back.

`serve` at 100k notes holds ~0.5 GB of long-lived data, built from much larger transients
(Parquet decoding, the vectors' principal subspace, DuckDB table copies). Two allocator
behaviours kept those transients resident after they were freed:
- pyarrow's default pool (mimalloc or jemalloc) keeps freed pages for its own later use;
  numpy, DuckDB and Python allocate from the C heap and cannot reuse them. The system
  pool puts Arrow buffers on the same heap, so memory freed by one is reused by the others.
- glibc returns freed memory in the middle of its heap to the kernel only on `malloc_trim`,
  so after a load's transients are freed the resident set stays at the load's peak.
- glibc gives each thread that allocates its own arena, up to 8 per core; what one thread
  frees is reused by that arena only, and a long `serve --watch` (writer, parse, engine
  merges, DuckDB and request threads) kept ~250 MB free-but-resident in 16 arenas after
  500 commits at 10k notes (malloc_trim did not give it back), against ~40 MB with two
  arenas (issue 32, ops/bench/bench_longrun.py). `limit_arenas` is the in-process
  `MALLOC_ARENA_MAX=2`.
- glibc raises its mmap threshold each time a large block is freed, so after the first
  load every transient up to 32 MB (decoded Parquet columns, numpy arrays, DuckDB chunks)
  came from the arenas, between long-lived objects: 200-215 MB of the arenas were free
  (fragmented) against ~140 MB in use after 200 commits at 10k notes. A fixed threshold
  (MMAP_THRESHOLD_BYTES, which also stops the raising) gives such a block its own
  mapping, returned when freed, whenever the heap has no free room for it: 75 MB free (ops/bench/heap_profile.py --mmap-threshold).
- Arrow's IO thread pool (8 threads by default, started by the first Parquet read that
  pre-buffers) keeps per-thread buffers and stacks for the life of the process, while the
  readers' Parquet files are local and small: ARROW_IO_THREADS are enough
  (ops/bench/heap_profile.py --arrow-io-threads measures it).
All are best effort: on another C library they do nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import threading
from typing import Any

import pyarrow as pa

_lock = threading.Lock()
_done = False
_trim: Any = None  # glibc's malloc_trim, or None
MALLOC_ARENAS = 2
ARROW_IO_THREADS = 2  # Arrow's IO pool in a reader's process (its default is 8)
_M_ARENA_MAX = -8  # glibc's mallopt parameters
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 256 << 10


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def limit_arenas(arenas: int = MALLOC_ARENAS) -> None:
    """At most `arenas` malloc arenas from now on (call before the process starts threads:
    a thread keeps the arena it already has), and blocks of MMAP_THRESHOLD_BYTES or more
    that the heap has no room for in their own mappings."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None) if libc is not None else None
    if mallopt is not None:
        mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        mallopt.restype = ctypes.c_int
        mallopt(_M_ARENA_MAX, arenas)
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


def use_system_arrow_pool() -> None:
    """Allocate Arrow buffers from the C heap, with ARROW_IO_THREADS IO threads, from now on
    (process-wide, once)."""
    global _done, _trim
    with _lock:
        if _done:
            return
        _done = True
        with contextlib.suppress(AttributeError, NotImplementedError):  # a build without it
            pa.set_memory_pool(pa.system_memory_pool())
        pa.set_io_thread_count(ARROW_IO_THREADS)
        libc = _libc()
        trim = getattr(libc, "malloc_trim", None) if libc is not None else None  # glibc only
        if trim is not None:
            trim.argtypes = [ctypes.c_size_t]
            trim.restype = ctypes.c_int
        _trim = trim


def release_free_memory() -> None:
    """Give the C heap's free pages back to the kernel (after a load's transients are freed;
    ~ms at 100k notes)."""
    global _after_trim
    if _trim is not None:
        _trim(0)
        _after_trim = _resident()


TRIM_GROWTH_BYTES = 64 << 20  # resident growth since the last trim that makes a request trim
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_after_trim = 0


def _resident() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:  # ~10 µs; Linux only
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def release_if_grown() -> None:
    """After a request: trim when the resident set grew by TRIM_GROWTH_BYTES since the last
    trim (a find or grep leaves ~150-250 MB of freed transients at 100k notes, on which the
    next heavy request would stack its own). A request that allocated little costs one read
    of /proc/self/statm."""
    global _after_trim
    if _trim is None:
        return
    now = _resident()
    if now and now > _after_trim + TRIM_GROWTH_BYTES:
        _trim(0)
        _after_trim = _resident()
