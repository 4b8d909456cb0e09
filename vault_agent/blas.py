"""One BLAS thread per calling thread, process-wide (the servers and the embedding worker).

numpy's OpenBLAS starts as many helper threads as cores and splits every matrix product
over them; its helpers spin while they wait. Our products are small (a query against the
model's weights, a sketch scan of 128 floats a row) and the servers run several requests,
the writer and a watcher at once, so the split buys nothing and, on a busy machine, makes
a product wait for a helper to be scheduled: on 2 cores at load 15,
`ops/bench/bench_sustained.py` measured an idle hybrid search p50 of 547 ms with two threads
and 35 ms with one; in the embedding worker a passage cost 57 ms of CPU against 13
(docs/benchmarks.md). Parallelism comes from threads of our own (requests, the worker's
encoder threads) instead.
"""

from __future__ import annotations

import threading

from threadpoolctl import threadpool_limits

_lock = threading.Lock()
_done = False

__all__ = ["use_one_blas_thread"]


def use_one_blas_thread() -> None:
    """Limit the BLAS libraries numpy loaded to one thread (once per process)."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
        import numpy  # noqa: F401 - its BLAS must be loaded for the limit to reach it

        threadpool_limits(limits=1, user_api="blas")
