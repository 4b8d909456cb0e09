"""The writer's handle on one embedding worker process (worker.py): start, talk, stop.

Only the embedder's dispatcher thread sends jobs, reads events and stops it; another
thread may `close_input()` (the worker ends after the batch in flight, and the
dispatcher's read sees the end) or `kill()` it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path

from pydantic import ValidationError

import vault_agent
from vault_agent.semantic.worker_messages import EVENTS, CancelJob, EmbedJob, WorkerEvent, to_line

# Each encoder thread's BLAS single-threaded: OpenBLAS's spinning helper threads beside
# ours cost 4x the CPU per passage (worker.py). Set before the worker imports numpy.
BLAS_ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
STOP_TIMEOUT_S = 5.0  # a batch in flight finishes within this; then terminate

__all__ = ["WorkerDied", "WorkerProcess"]


class WorkerDied(Exception):
    """The worker process ended without being asked to (crash, kill, out of memory)."""


class WorkerProcess:
    """One running worker; `events()` yields its messages until it exits."""

    def __init__(self, index_dir: Path, *, nice: int, threads: int) -> None:
        package_root = str(Path(vault_agent.__file__).resolve().parents[1])
        env = {**os.environ, **BLAS_ONE_THREAD}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vault_agent.semantic.worker",
                str(index_dir),
                "--nice",
                str(nice),
                "--threads",
                str(threads),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._send_lock = threading.Lock()
        self.stopping = False

    @property
    def pid(self) -> int:
        return self._proc.pid

    def returncode(self) -> int | None:
        return self._proc.poll()

    def send(self, command: EmbedJob | CancelJob) -> None:
        """Hand the worker a job, or cancel the one in flight.

        Raises:
            WorkerDied: the worker is gone.
        """
        line = to_line(command)
        with self._send_lock:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise WorkerDied(type(exc).__name__) from exc

    def next_event(self) -> WorkerEvent:
        """The worker's next message (blocks).

        Raises:
            WorkerDied: its output ended (it exited or was killed).
        """
        assert self._proc.stdout is not None
        while True:
            try:
                line = self._proc.stdout.readline()
            except (OSError, ValueError) as exc:
                raise WorkerDied(type(exc).__name__) from exc
            if not line:
                code = self._proc.wait()
                raise WorkerDied(f"exit {code}")
            try:
                return EVENTS.validate_json(line)
            except ValidationError:
                continue  # not ours: the protocol has its own descriptor, so this is unexpected

    def close_input(self) -> None:
        """EOF on the worker's stdin: it stops after the batch in flight. Any thread."""
        self.stopping = True
        with self._send_lock, contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """End the worker and release its pipes: EOF, then terminate/kill if it lingers.
        Idempotent; called by the thread that reads its events (or once that one is gone)."""
        self.close_input()
        try:
            self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stdout is not None:
            with contextlib.suppress(OSError):
                self._proc.stdout.close()

    def kill(self) -> None:
        """Kill at once (a worker that does not stop; tests of the supervision)."""
        with contextlib.suppress(OSError):
            self._proc.kill()
