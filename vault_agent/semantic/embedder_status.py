"""What the embedder tells readers: `embedder.json` (progress.py reads it) and its counters.

The writer's embedder (embedder.py) and its worker's supervisor (worker_supervisor.py)
record here its phase, the model, restarts, the last error, and the notes per encoder
batch behind the rate (and so the ETA of `status`). Thread-safe: the dispatcher thread
records, the writer's heartbeat publishes.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from vault_agent.semantic.progress import EMBEDDER_STATE_FILE, EmbedderPhase, EmbedderState

RATE_WINDOW_S = 60.0  # the rate behind the ETA: notes embedded over the last minute

__all__ = ["RATE_WINDOW_S", "EmbedderStatus"]


class EmbedderStatus:
    """The embedder's phase, counters and rate; writes and removes `embedder.json`."""

    def __init__(self, index_dir: Path, command: str, on_phase: Callable[[], None]) -> None:
        self._path = Path(index_dir) / EMBEDDER_STATE_FILE
        self.command = command
        self._on_phase = on_phase  # publishes the state (unless the embedder is stopping)
        self._lock = threading.Lock()
        self._rate: collections.deque[tuple[float, int]] = collections.deque()
        self.phase: EmbedderPhase = "idle"
        self.model: str | None = None
        self.restarts = 0
        self.last_error: str | None = None
        self.passages_embedded = 0  # computed by the model (tests: unchanged notes never are)
        self.passages_reused = 0
        self.job_notes = 0  # notes done by the job in flight, not yet published

    def set_phase(self, phase: EmbedderPhase) -> None:
        """A new phase is published at once (`status` shows it)."""
        if phase != self.phase:
            self.phase = phase
            self._on_phase()

    def batch_done(self, notes: int) -> None:
        """One encoder batch of the job in flight embedded `notes` notes."""
        with self._lock:
            self._rate.append((time.monotonic(), notes))
            self.job_notes += notes

    def job_ended(self) -> None:
        """The job in flight ended: its notes are published (or lost with it)."""
        with self._lock:
            self.job_notes = 0

    def passages_done(self, embedded: int, reused: int) -> None:
        with self._lock:
            self.passages_embedded += embedded
            self.passages_reused += reused

    def notes_per_s(self) -> float | None:
        """Notes embedded per second over the last minute, or None before two batches."""
        with self._lock:
            now = time.monotonic()
            while self._rate and now - self._rate[0][0] > RATE_WINDOW_S:
                self._rate.popleft()
            if len(self._rate) < 2:
                return None
            span = self._rate[-1][0] - self._rate[0][0]
            notes = sum(n for _, n in list(self._rate)[1:])
            return round(notes / span, 2) if span > 0 and notes else None

    def write(self, worker_pid: int | None) -> None:
        """Write `embedder.json` now (heartbeat, phase, rate)."""
        state = EmbedderState(
            pid=os.getpid(),
            heartbeat_at=time.time(),
            command=self.command,
            phase=self.phase,
            worker_pid=worker_pid,
            model=self.model,
            restarts=self.restarts,
            last_error=self.last_error,
            notes_per_s=self.notes_per_s(),
        )
        # Replaced atomically, not durably: a heartbeat (like writer.json), rewritten every second.
        tmp = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_bytes(state.model_dump_json().encode())
            os.replace(tmp, self._path)

    def remove(self) -> None:
        """Remove `embedder.json`: nothing computes embeddings any more."""
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()
