"""Helpers every test package shares: bounded waits, the one golden-file check, a parsed
note's rows.

Golden files are compared byte for byte and rewritten only with `pytest --update-golden`
(the flag is declared in tests/conftest.py); never edit them by hand.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault_agent.contracts import ParsedNote
from vault_agent.term_rows import terms_table

UPDATE_GOLDEN = False  # set from --update-golden by tests/conftest.py


def wait_until(pred: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    """Poll a condition with a bound and a growing interval (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    ev = threading.Event()
    delay = 0.005
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        ev.wait(delay)
        delay = min(delay * 2, 0.1)


def check_golden(path: Path, text: str) -> None:
    """Compare `text` with the golden file at `path` byte for byte (rewrite it with --update-golden)."""
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    if not path.exists():
        raise AssertionError(f"golden {path.name} is missing; create it with: pytest --update-golden")
    expected = path.read_bytes().decode("utf-8")
    assert text == expected, f"golden {path.name} differs (after a deliberate change: pytest --update-golden)"


def parsed_rows(note: ParsedNote, table: str) -> list[dict[str, Any]]:
    """One parsed note's rows of `table`; its `terms` counted as the indexer counts a batch's."""
    if table == "terms":
        rows: list[dict[str, Any]] = terms_table([note]).to_pylist()
        return rows
    return [note.note] if table == "notes" else list(getattr(note, table))
