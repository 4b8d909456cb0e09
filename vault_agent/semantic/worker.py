"""The embedding worker process: loads the model and runs jobs at a low CPU priority.

    python -m vault_agent.semantic.worker INDEX_DIR --nice N --threads T

Why a process (issue 20): in the writer's process the embedder's threads competed with
queries for the cores and the GIL (search p99 9.7x idle under sustained editing). Here it
runs at nice N (10 by default: a waiting query gets the core first), the
model lives in this process only (the server loads its own copy only to embed queries),
and a crash cannot take the server down: the writer restarts it (embedder.py).
Each encoder call runs on its calling thread alone: e5's onnxruntime session has one intra-op
thread and no spinning (e5_encoder.py); for USE each thread's BLAS is single-threaded
(OPENBLAS_NUM_THREADS=1 etc., set by the parent before numpy loads): OpenBLAS's own threads
spin while waiting and, beside our threads, made a passage cost 4x the CPU (57 ms against
13 ms measured, bench_embed.py).

Protocol: JSON lines. stdin: `EmbedJob`s (embed_job.py), `{"op": "cancel"}`; EOF = stop.
stdout (a private copy: fd 1 is pointed at stderr so that no stray print can break it):
`{"ev": "ready", "model", "dim"}` or `{"ev": "model_failed", "error"}` once, then per job
`{"ev": "batch", "notes", "passages"}`... and one of `{"ev": "done", "files", "complete",
"notes", "embedded", "reused"}`, `{"ev": "cancelled"}`, `{"ev": "failed", "error"}`.
Nothing in a message is note text or an absolute path (errors are exception type names).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import IO, Any

log = logging.getLogger("vault_agent.semantic.worker")

__all__ = ["main"]


def _lower_priority(nice: int) -> None:
    """Nice every thread of this process (Linux applies setpriority per thread; threads
    started later inherit it from their creator)."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]
    for tid in tids:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, tid, nice)


class _Inbox:
    """stdin on a thread: jobs queue up, `cancel` flags the running one, EOF stops."""

    def __init__(self, stream: IO[str]) -> None:
        self.jobs: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stopping = threading.Event()
        self.cancelled = threading.Event()
        self._stream = stream
        threading.Thread(target=self._read, name="vault-agent-embed-inbox", daemon=True).start()

    def _read(self) -> None:
        for line in self._stream:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("op") == "cancel":
                self.cancelled.set()
            else:
                self.jobs.put(msg)
        self.stopping.set()
        self.jobs.put(None)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    index_dir = Path(args[0])
    nice = int(args[args.index("--nice") + 1]) if "--nice" in args else 19
    threads = int(args[args.index("--threads") + 1]) if "--threads" in args else 1
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints of any library go to stderr, never into the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops us by EOF
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    _lower_priority(nice)
    write_lock = threading.Lock()

    def emit(ev: str, **fields: Any) -> None:
        with write_lock:
            out.write(json.dumps({"ev": ev, **fields}, separators=(",", ":")) + "\n")

    from vault_agent.blas import use_one_blas_thread
    from vault_agent.heap import use_system_arrow_pool
    from vault_agent.semantic.embed_job import EmbedJob, SegmentEmbedder
    from vault_agent.semantic.encoder import load_encoder, load_error

    use_one_blas_thread()  # the parent's environment did it already; this holds wherever we run
    # Arrow's buffers (a segment's chunks, read per job) on the C heap, which the trim after
    # reading gives back: mimalloc's pool kept ~30 MB of a 5,120-note segment's read.
    use_system_arrow_pool()

    encoder = load_encoder()
    if encoder is None:
        emit("model_failed", error=load_error() or "unknown")
        return 0
    emit("ready", model=encoder.model_id, dim=encoder.dim)
    inbox = _Inbox(sys.stdin)
    runner = SegmentEmbedder(index_dir, encoder, threads)
    try:
        while True:
            msg = inbox.jobs.get()
            if msg is None:
                return 0
            inbox.cancelled.clear()
            try:
                job = EmbedJob.model_validate(msg)
                result = runner.run(
                    job,
                    lambda: inbox.stopping.is_set() or inbox.cancelled.is_set(),
                    lambda notes, passages: emit("batch", notes=notes, passages=passages),
                )
            except Exception as exc:  # a bad segment fails its job, not the worker
                log.error("embedding job failed (%s)", type(exc).__name__)
                emit("failed", error=type(exc).__name__)
                continue
            if result is None:
                if inbox.stopping.is_set():
                    return 0
                emit("cancelled")
                continue
            emit(
                "done",
                files=result.files,
                complete=result.complete,
                notes=result.notes,
                embedded=result.embedded,
                reused=result.reused,
            )
    finally:
        runner.close()


if __name__ == "__main__":
    raise SystemExit(main())
