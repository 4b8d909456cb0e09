"""How write tools tell the indexer what they changed, and wait for it to be indexed.

    record_changes(settings, [(op, path, dest)], writer=None) -> seq
    wait_for_seq(settings, seq, timeout_s, writer=None) -> snapshot_id | None

op is upsert | delete | move (dest only for move); paths are vault-relative. With the live
`Writer` of this process the events go through it (and wake it at once); otherwise they are
appended to the state dir's log directly (flock-serialised), where the writer process —
if one runs — picks them up within a heartbeat, or the next `index` does.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Literal

from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.eventlog import EventLog, NewEvent
from vault_agent.paths import normalize_rel_path

__all__ = ["ToolChange", "ToolOp", "Writer", "record_changes", "wait_for_seq"]  # Writer: for FilesContext

ToolOp = Literal["upsert", "delete", "move"]
ToolChange = tuple[ToolOp, str, str | None]  # (op, path, dest); dest only for move

POLL_MIN_S = 0.02
POLL_MAX_S = 0.25


def _events(changes: list[ToolChange]) -> list[NewEvent]:
    out: list[NewEvent] = []
    for op, path, dest in changes:
        if op not in ("upsert", "delete", "move"):
            raise InvalidParameter("a change must be upsert, delete or move")
        rel = normalize_rel_path(path)
        if op == "move":
            if dest is None:
                raise InvalidParameter("a move needs a destination")
            out.append(NewEvent("move", rel, normalize_rel_path(dest), None, None, "tool"))
        else:
            out.append(NewEvent(op, rel, None, None, None, "tool"))
    return out


def _floor(index_dir: Path) -> int:
    m = read_current_manifest(index_dir)
    return m.applied_seq if m else 0


def record_changes(settings: Settings, changes: list[ToolChange], writer: Writer | None = None) -> int:
    """Append the changes as one batch; returns the seq that covers all of them.

    Raises:
        InvalidParameter: an unknown op, a move without destination, or an invalid path.
    """
    items = _events(changes)
    if writer is not None:
        return writer.append(items)
    index_dir = Path(settings.index_dir)
    return EventLog(index_dir, floor_seq=lambda: _floor(index_dir)).append(items)


def wait_for_seq(settings: Settings, seq: int, timeout_s: float, writer: Writer | None = None) -> int | None:
    """Snapshot id of the first committed snapshot with applied_seq >= seq, or None on timeout."""
    if writer is not None:
        return writer.wait_for_seq(seq, timeout_s)

    deadline = time.monotonic() + max(0.0, timeout_s)
    delay = POLL_MIN_S
    event = threading.Event()  # an interruptible, bounded wait between polls of CURRENT
    while True:
        m = read_current_manifest(Path(settings.index_dir))
        if m is not None and m.applied_seq >= seq:
            return m.snapshot_id
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        event.wait(min(delay, remaining))
        delay = min(delay * 2, POLL_MAX_S)
