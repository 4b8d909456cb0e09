"""Keeps the embedding worker process alive for the embedder (embedder.py).

A worker that dies is restarted with backoff (1 s doubling to 30 s), counted in
`restarts` and reported in `embedder.json` (embedder_status.py); a segment that crashed it
MAX_CRASHES_PER_SEGMENT times is left lexical (logged) so one bad note cannot crash-loop
it. A model that fails to load stops the embedder for good (`model_failed`; search says
SEMANTIC_UNAVAILABLE).

Only the embedder's dispatcher thread starts, stops and restarts the worker; `request_stop`
and `kill` may come from any thread (the writer stopping).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from vault_agent.semantic.embedder_status import EmbedderStatus
from vault_agent.semantic.encoder import active_model
from vault_agent.semantic.settings import embed_threads
from vault_agent.semantic.worker_client import WorkerDied, WorkerProcess
from vault_agent.semantic.worker_messages import ModelFailed, WorkerReady

log = logging.getLogger("vault_agent.semantic")

RESTART_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
MAX_CRASHES_PER_SEGMENT = 3

__all__ = ["MAX_CRASHES_PER_SEGMENT", "RESTART_BACKOFF_S", "WorkerSupervisor"]


class WorkerSupervisor:
    """Starts the worker when a job needs it, restarts it after a crash, stops it."""

    def __init__(
        self,
        index_dir: Path,
        status: EmbedderStatus,
        leave_lexical: Callable[[int], None],
        *,
        nice: int,
        threads: int | None,
    ) -> None:
        self._index_dir = Path(index_dir)
        self._status = status
        self._leave_lexical = leave_lexical  # called with a segment that kept crashing it
        self.nice = nice
        self.threads = threads  # None: the environment's (settings.embed_threads)
        self.model_failed = False
        self._lock = threading.Lock()  # `_proc` between the dispatcher and `request_stop`
        self._proc: WorkerProcess | None = None
        self._stopping = threading.Event()
        self._crashes: collections.Counter[int] = collections.Counter()
        self._consecutive_crashes = 0

    @property
    def worker_pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None else None

    @property
    def has_worker(self) -> bool:
        return self._proc is not None

    def begin(self) -> None:
        """The embedder starts (again): workers may be started."""
        self._stopping.clear()

    def request_stop(self) -> None:
        """The worker ends after its batch in flight (at once while loading the model:
        nothing to finish, nothing to lose); no restart after this. Any thread."""
        with self._lock:
            self._stopping.set()
            proc = self._proc
        if proc is not None:
            if self._status.phase == "starting":
                proc.kill()
            proc.close_input()

    def kill(self) -> None:
        """Kill the worker at once: one that does not stop must not outlive its writer."""
        proc = self._proc
        if proc is not None:
            proc.kill()

    def stop_worker(self) -> None:
        """End the worker (idle long enough, or the embedder stops): frees the model."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop()

    def ensure(self) -> WorkerProcess | None:
        """A worker with its model loaded, started if need be; None when there is none
        (stopping, the model failed, or it died while starting: counted, backed off)."""
        proc = self._proc
        if proc is not None and proc.returncode() is None:
            return proc
        if proc is not None:  # died between jobs (killed, out of memory)
            self.crashed(WorkerDied(f"exit {proc.returncode()}"), None)
            if self._stopping.is_set():
                return None
        self._status.set_phase("starting")
        threads = self.threads or embed_threads()
        proc = WorkerProcess(self._index_dir, nice=self.nice, threads=threads)
        with self._lock:
            self._proc = proc
            if self._stopping.is_set():  # `request_stop` ran before it could see this worker
                proc.close_input()
        try:
            event = proc.next_event()
        except WorkerDied as exc:
            if not self._stopping.is_set():
                self.crashed(exc, None)
            return None
        if isinstance(event, ModelFailed):
            self.model_failed = True
            self._status.last_error = event.error  # the worker logged it (same stderr)
            self._status.set_phase("failed")
            self.stop_worker()
            return None
        self._status.model = event.model if isinstance(event, WorkerReady) else active_model().model_id
        return proc

    def job_succeeded(self, segment_id: int) -> None:
        """A job finished: its segment's crashes and the backoff start over."""
        self._crashes.pop(segment_id, None)
        self._consecutive_crashes = 0

    def crashed(self, exc: WorkerDied, segment_id: int | None) -> None:
        """The worker died: count it, leave a segment that keeps crashing it, back off."""
        self.stop_worker()
        self._status.restarts += 1
        self._status.last_error = str(exc)
        if segment_id is not None:
            self._crashes[segment_id] += 1
            if self._crashes[segment_id] >= MAX_CRASHES_PER_SEGMENT:
                self._leave_lexical(segment_id)
                log.error(
                    "one segment crashed the embedding worker %d times; it stays lexical",
                    self._crashes[segment_id],
                )
        delay = RESTART_BACKOFF_S[min(self._consecutive_crashes, len(RESTART_BACKOFF_S) - 1)]
        self._consecutive_crashes += 1
        log.warning("the embedding worker stopped unexpectedly (%s); restarting in %.0f s", exc, delay)
        self._status.set_phase("restarting")
        self._stopping.wait(delay)
