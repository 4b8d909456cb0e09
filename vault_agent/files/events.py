"""The write tools' only link to the indexer: append events, optionally wait for a snapshot.

`vault_agent.indexer.tool_events` (engine) owns the event log; a write appends
`(op, path, dest)` tuples there and gets back the log seq, then may wait until a
committed snapshot contains that seq. When the log cannot be appended to or no writer
commits in time, the write still succeeds (the file is on disk and a later scan finds it)
and says so in a warning.
"""

from __future__ import annotations

import logging
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


def record(ctx: FilesContext, changes: list[Change]) -> tuple[int | None, list[WarningItem]]:
    """Append the events of one tool call; returns (seq, warnings). Never fails the write."""
    if not changes:
        return None, []
    # Imported here, not at the top: the event log pulls in the engine and pyarrow, which
    # the server-backed CLI commands that import the write tools never need.
    from vault_agent.indexer.tool_events import record_changes

    try:
        seq = record_changes(ctx.settings, list(changes), writer=ctx.writer)
    except Exception as exc:  # noqa: BLE001 - the file is already durable: report, do not turn success into failure
        log.warning("tool event not recorded (%s)", type(exc).__name__)
        return None, [NOT_RECORDED]
    return seq, []


def wait(
    ctx: FilesContext, seq: int | None, timeout_s: float = WAIT_TIMEOUT_S
) -> tuple[int | None, list[WarningItem]]:
    """Wait (bounded) for the snapshot containing `seq`; returns (snapshot id, warnings)."""
    if seq is None:
        return None, [NOT_INDEXED]
    from vault_agent.indexer.tool_events import wait_for_seq  # lazy: see `record`

    if ctx.writer is None and not _writer_running(ctx):
        timeout_s = 0.0  # nobody will commit it: answer from the current snapshot at once
    try:
        snap = wait_for_seq(ctx.settings, seq, timeout_s, writer=ctx.writer)
    except Exception as exc:  # noqa: BLE001 - the write succeeded; a failed wait is only a warning
        log.warning("waiting for the index failed (%s)", type(exc).__name__)
        return None, [NOT_INDEXED]
    if snap is None:
        return None, [NOT_INDEXED]
    return snap, []


def _writer_running(ctx: FilesContext) -> bool:
    """True when another process publishes a live writer heartbeat for this state dir."""
    from vault_agent.freshness import read_writer_state, writer_alive  # lazy: pyarrow

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
