"""The write tools' only link to the indexer: append events, optionally wait for a snapshot.

`vault_agent.indexer.tool_events` (engine) owns the event log; a write appends
`(op, path, dest)` tuples there and gets back the log seq, then may wait until a
committed snapshot contains that seq. When the module or a writer is missing, the write
still succeeds (the file is on disk and a later scan finds it) and says so in a warning.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType
from typing import Literal

from vault_agent.contracts import WarningItem
from vault_agent.files.models import FilesContext, IndexInfo

log = logging.getLogger("vault_agent.files")

EventOp = Literal["upsert", "delete", "move"]
Change = tuple[EventOp, str, str | None]
WAIT_TIMEOUT_S = 10.0

NOT_RECORDED = WarningItem(
    code="WRITE_NOT_RECORDED",
    message="the change is on disk but was not added to the index event log; "
    "run 'vault-agent index' (or serve with --watch) to index it",
)
NOT_INDEXED = WarningItem(
    code="WRITE_NOT_INDEXED",
    message="the change is on disk but no index writer committed it in time; "
    "serve with --watch (or run 'vault-agent index'), then read again",
)


def _tool_events() -> ModuleType | None:
    try:
        return importlib.import_module("vault_agent.indexer.tool_events")
    except ModuleNotFoundError as exc:
        if exc.name != "vault_agent.indexer.tool_events":
            raise
        return None


def record(ctx: FilesContext, changes: list[Change]) -> tuple[int | None, list[WarningItem]]:
    """Append the events of one tool call; returns (seq, warnings). Never fails the write."""
    if not changes:
        return None, []
    mod = _tool_events()
    if mod is None:
        return None, [NOT_RECORDED]
    try:
        seq = mod.record_changes(ctx.settings, list(changes), writer=ctx.writer)
    except Exception as exc:  # the file is already durable: report, do not turn success into failure
        log.warning("tool event not recorded (%s)", type(exc).__name__)
        return None, [NOT_RECORDED]
    return (int(seq) if seq is not None else None), []


def wait(
    ctx: FilesContext, seq: int | None, timeout_s: float = WAIT_TIMEOUT_S
) -> tuple[int | None, list[WarningItem]]:
    """Wait (bounded) for the snapshot containing `seq`; returns (snapshot id, warnings)."""
    mod = _tool_events()
    if seq is None or mod is None:
        return None, [NOT_INDEXED]
    if ctx.writer is None and not _writer_running(ctx):
        timeout_s = 0.0  # nobody will commit it: answer from the current snapshot at once
    try:
        snap = mod.wait_for_seq(ctx.settings, seq, timeout_s, writer=ctx.writer)
    except Exception as exc:
        log.warning("waiting for the index failed (%s)", type(exc).__name__)
        return None, [NOT_INDEXED]
    if snap is None:
        return None, [NOT_INDEXED]
    return int(snap), []


def _writer_running(ctx: FilesContext) -> bool:
    """True when another process publishes a live writer heartbeat for this state dir."""
    try:
        from vault_agent.freshness import read_writer_state, writer_alive
    except ImportError:
        return True  # cannot tell: wait the bounded time
    return writer_alive(read_writer_state(ctx.settings.index_dir))


def finish(
    ctx: FilesContext, seq: int | None, warnings: list[WarningItem], wait_for_index: bool
) -> tuple[IndexInfo, list[WarningItem]]:
    """IndexInfo of a write after its events were recorded (and waited for when asked)."""
    info = IndexInfo(event_seq=seq)
    out = list(warnings)
    if wait_for_index and not any(w.code == NOT_RECORDED.code for w in out):
        snap, more = wait(ctx, seq)
        info.snapshot_id = snap
        info.indexed = snap is not None
        out.extend(more)
    elif wait_for_index:
        out.append(NOT_INDEXED)
    return info, out
