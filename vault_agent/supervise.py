"""Threads that must live: a failure restarts them after a backoff and is counted.

The writer's heartbeat, build loop and watcher, and the embedder, each run for the life of
the process; before this module a single unexpected exception (EMFILE under a connection
flood, for one) ended such a thread for good and nothing said so: the heartbeat stopped,
`writer.json` aged, and `status` from the CLI disagreed with the server's own answer.

`Supervisor.spawn(name, target)` runs `target()` on a daemon thread. When it returns, the
thread ends (the component stopped normally). When it raises, the exception is logged as
one line (its type only; the first failure of a name also gets the scrubbed traceback),
counted under the name, and `target()` runs again after MIN_BACKOFF_S, doubling to
MAX_BACKOFF_S, back to the minimum once a run lasted HEALTHY_RUN_S. Components that are
not plain threads (watchdog's observer) report their restarts with `record`. `report()`
is what `writer.json` publishes and `status --verbose` shows.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("vault_agent.supervise")

Spawn = Callable[[str, Callable[[], None]], threading.Thread]  # Supervisor.spawn's shape

MIN_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
HEALTHY_RUN_S = 60.0  # a run this long resets the backoff


@dataclass
class Health:
    """Restarts of one supervised component and its last failure (exception type only)."""

    restarts: int = 0
    last_error: str | None = None
    last_failure_at: float | None = None  # time.time()


class Supervisor:
    """Named, restarted threads and their restart counts; thread-safe (see module doc)."""

    def __init__(self, on_failure: Callable[[str], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._health: dict[str, Health] = {}
        self._stop = threading.Event()
        self._threads: dict[str, threading.Thread] = {}
        self._on_failure = on_failure

    def spawn(self, name: str, target: Callable[[], None]) -> threading.Thread:
        """Start `target` on a supervised daemon thread named `vault-agent-<name>`."""
        thread = threading.Thread(
            target=self._run, args=(name, target), name=f"vault-agent-{name}", daemon=True
        )
        with self._lock:
            self._health.setdefault(name, Health())
            self._threads[name] = thread
        thread.start()
        return thread

    def record(self, name: str, error: str) -> None:
        """Count one restart of `name` whose cause was `error` (an exception type or a reason)."""
        with self._lock:
            health = self._health.setdefault(name, Health())
            health.restarts += 1
            health.last_error = error
            health.last_failure_at = time.time()
        if self._on_failure is not None:
            self._on_failure(name)

    def report(self) -> dict[str, Health]:
        """A copy of every component's health, by name."""
        with self._lock:
            return {
                name: Health(h.restarts, h.last_error, h.last_failure_at) for name, h in self._health.items()
            }

    def stop(self) -> None:
        """Wake threads waiting out a backoff so they end (their targets stop on their own)."""
        self._stop.set()

    def _run(self, name: str, target: Callable[[], None]) -> None:
        backoff = MIN_BACKOFF_S
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                target()
                return
            except Exception as exc:  # noqa: BLE001 - the point of this module: the thread must live
                first = self.report().get(name, Health()).restarts == 0
                if time.monotonic() - started >= HEALTHY_RUN_S:
                    backoff = MIN_BACKOFF_S
                self.record(name, type(exc).__name__)
                log.error(
                    "%s thread failed (%s); restarting in %.1f s",
                    name,
                    type(exc).__name__,
                    backoff,
                    exc_info=first,  # the traceback once per name; the formatter scrubs paths
                    extra={"event": "thread_restart", "op": name},
                )
            if self._stop.wait(backoff):
                return
            backoff = min(MAX_BACKOFF_S, backoff * 2)


def plain_thread(name: str, target: Callable[[], None]) -> threading.Thread:
    """An unsupervised daemon thread (components used without a supervisor, e.g. in tests)."""
    thread = threading.Thread(target=target, name=f"vault-agent-{name}", daemon=True)
    thread.start()
    return thread
