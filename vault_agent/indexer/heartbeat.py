"""The writer's heartbeat: a thread that ticks every HEARTBEAT_INTERVAL_S until stopped.

Each tick republishes `writer.json` (readers judge the writer alive by its age) and looks
for appends by other processes. A tick that comes much later than scheduled means the
process did not run for a while (SIGSTOP, suspend): events may have been lost without an
overflow record reaching us yet, which the tick reports as `missed_time=True`.
The thread comes from `spawn` (the writer's supervisor): a tick that raises restarts the
loop after a backoff instead of ending the heartbeat for good.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from vault_agent.contracts import HEARTBEAT_INTERVAL_S
from vault_agent.supervise import Spawn, plain_thread

MISSED_TIME_S = 2.5 * HEARTBEAT_INTERVAL_S  # a tick this late: the process was stopped


class Heartbeat:
    """Calls `tick(missed_time)` every HEARTBEAT_INTERVAL_S on its own thread until `stop()`."""

    def __init__(self, tick: Callable[[bool], None], spawn: Spawn = plain_thread) -> None:
        self._tick = tick
        self._spawn = spawn
        self._interval_s = HEARTBEAT_INTERVAL_S
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = self._spawn("heartbeat", self._run)

    def stop(self, timeout_s: float = 60.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
            self._thread = None

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self._interval_s):
            now = time.monotonic()
            self._tick(now - last > MISSED_TIME_S)
            last = now
