"""The supervisor: a thread that must live is restarted after an exception, and counted."""

from __future__ import annotations

import logging
import threading

import pytest
from testkit import wait_until

from vault_agent import supervise
from vault_agent.supervise import Supervisor


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervise, "MIN_BACKOFF_S", 0.01)


def test_a_failing_target_is_restarted_counted_and_logged_once_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs: list[int] = []
    finished = threading.Event()
    failures: list[str] = []

    def target() -> None:
        runs.append(len(runs))
        if len(runs) <= 2:
            raise OSError(24, "Too many open files")
        finished.set()

    sup = Supervisor(on_failure=failures.append)
    with caplog.at_level(logging.ERROR, logger="vault_agent.supervise"):
        thread = sup.spawn("beat", target)
        thread.join(timeout=30)
    assert finished.is_set() and len(runs) == 3
    health = sup.report()["beat"]
    assert (health.restarts, health.last_error, failures) == (2, "OSError", ["beat", "beat"])
    records = [r for r in caplog.records if r.name == "vault_agent.supervise"]
    assert [r.getMessage() for r in records] == [
        "beat thread failed (OSError); restarting in 0.0 s",
        "beat thread failed (OSError); restarting in 0.0 s",
    ]
    assert [bool(r.exc_info) for r in records] == [True, False]  # the traceback once


def test_stop_ends_a_thread_waiting_out_its_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervise, "MIN_BACKOFF_S", 3600.0)

    def target() -> None:
        raise RuntimeError("always")

    sup = Supervisor()
    thread = sup.spawn("loop", target)
    wait_until(lambda: sup.report()["loop"].restarts == 1, 30, "the first failure")
    sup.stop()
    thread.join(timeout=30)
    assert not thread.is_alive()
