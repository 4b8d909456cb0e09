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

Protocol: JSON lines, one message a line, each a model of worker_messages.py (parsed once
here, once in worker_client.py). stdout is a private copy: fd 1 is pointed at stderr so
that no stray print can break it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError

from vault_agent.semantic.worker_messages import (
    COMMANDS,
    BatchDone,
    CancelJob,
    EmbedJob,
    JobCancelled,
    JobDone,
    JobFailed,
    ModelFailed,
    WorkerReady,
    to_line,
)

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


@dataclass(frozen=True)
class _UnreadableJob:
    """A line that is no command: answered with `JobFailed` (the writer waits for an answer)."""

    error: str


class _Inbox:
    """stdin on a thread: jobs queue up, `cancel` flags the running one, EOF stops."""

    def __init__(self, stream: IO[str]) -> None:
        self.jobs: queue.Queue[EmbedJob | _UnreadableJob | None] = queue.Queue()
        self.stopping = threading.Event()
        self.cancelled = threading.Event()
        self._stream = stream
        threading.Thread(target=self._read, name="vault-agent-embed-inbox", daemon=True).start()

    def _read(self) -> None:
        for line in self._stream:
            if not line.strip():
                continue
            try:
                command = COMMANDS.validate_json(line)
            except ValidationError as exc:
                self.jobs.put(_UnreadableJob(type(exc).__name__))
                continue
            if isinstance(command, CancelJob):
                self.cancelled.set()
            else:
                self.jobs.put(command)
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

    def emit(event: BaseModel) -> None:
        with write_lock:
            out.write(to_line(event))

    from vault_agent.blas import use_one_blas_thread
    from vault_agent.heap import use_system_arrow_pool
    from vault_agent.semantic.embed_job import SegmentEmbedder
    from vault_agent.semantic.encoder import load_encoder, load_error

    use_one_blas_thread()  # the parent's environment did it already; this holds wherever we run
    # Arrow's buffers (a segment's chunks, read per job) on the C heap, which the trim after
    # reading gives back: mimalloc's pool kept ~30 MB of a 5,120-note segment's read.
    use_system_arrow_pool()

    encoder = load_encoder()
    if encoder is None:
        emit(ModelFailed(error=load_error() or "unknown"))
        return 0
    emit(WorkerReady(model=encoder.model_id, dim=encoder.dim))
    inbox = _Inbox(sys.stdin)
    runner = SegmentEmbedder(index_dir, encoder, threads)
    try:
        while True:
            job = inbox.jobs.get()
            if job is None:
                return 0
            inbox.cancelled.clear()
            if isinstance(job, _UnreadableJob):
                log.error("embedding job failed (%s)", job.error)
                emit(JobFailed(error=job.error))
                continue
            try:
                result = runner.run(
                    job,
                    lambda: inbox.stopping.is_set() or inbox.cancelled.is_set(),
                    lambda notes, passages: emit(BatchDone(notes=notes, passages=passages)),
                )
            except Exception as exc:  # a bad segment fails its job, not the worker
                log.error("embedding job failed (%s)", type(exc).__name__)
                emit(JobFailed(error=type(exc).__name__))
                continue
            if result is None:
                if inbox.stopping.is_set():
                    return 0
                emit(JobCancelled())
                continue
            emit(
                JobDone(
                    files=result.files,
                    complete=result.complete,
                    notes=result.notes,
                    embedded=result.embedded,
                    reused=result.reused,
                )
            )
    finally:
        runner.close()


if __name__ == "__main__":
    raise SystemExit(main())
