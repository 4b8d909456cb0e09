"""The `AppContext` of one server process: built on start, closed on shutdown.

Only composition roots (the CLI entry, `serve`, `mcp`) read the environment; they pass a
`Settings` here. With `watch`, this process becomes the index's single writer (engine
`Writer`: watcher → event log → snapshots); a second writer fails with `IndexBusy`.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from vault_agent.api.operation import AppContext
from vault_agent.config import Settings
from vault_agent.errors import IndexBusy, StorageFull, StorageReadOnly, from_os_error
from vault_agent.paths import vault_for_settings
from vault_agent.publish import before_publish

if TYPE_CHECKING:
    from vault_agent.contracts import Freshness, Manifest
    from vault_agent.indexer.engine import Writer
    from vault_agent.query.snapshot import FreshnessFn

log = logging.getLogger("vault_agent.app")


def _start_writer(settings: Settings) -> Writer:
    """Start the engine's in-process writer (lock + watcher + builder).

    Raises:
        IndexBusy: another process holds the writer lock.
    """
    # Imported here: only `serve --watch` and `mcp` need the engine (watchdog, the builder).
    from vault_agent.indexer.engine import Writer
    from vault_agent.indexer.lock import writer_lock_held

    if writer_lock_held(settings.index_dir):
        raise IndexBusy()  # cheap early answer; the writer's own flock stays authoritative
    # The readers of this process preload each snapshot before it is published (publish.py).
    writer = Writer(settings, watch=True, before_publish=partial(before_publish, settings.index_dir))
    writer.start()
    return writer


def build_context(settings: Settings, *, watch: bool, follow_if_busy: bool = False) -> AppContext:
    """Vault, snapshot reader and (with `watch`) the running writer of one process.

    With `follow_if_busy` (the `mcp` command), a held writer lock is not an error: the
    context serves read-only from the other writer's snapshots (`follower`).

    Raises:
        IndexBusy: `watch` and another writer holds the lock (unless `follow_if_busy`).
    """
    from vault_agent.blas import use_one_blas_thread
    from vault_agent.query.snapshot import SnapshotReader
    from vault_agent.semantic.warmup import warm_model, warm_snapshot

    _start_private_state(settings)
    use_one_blas_thread()  # blas.py: a query's matrix products never wait for BLAS helpers
    warm_model(settings)  # on a thread, beside the writer's catch-up and the MCP handshake
    vault = vault_for_settings(settings)
    writer: Writer | None = None
    follower = False
    read_only_reason: str | None = None
    if watch:
        try:
            writer = _start_writer(settings)
        except IndexBusy:
            if not follow_if_busy:
                raise
            follower = True
        except OSError as exc:
            # A state dir we cannot write (read-only mount, permissions, full before the
            # lock exists): no writer, but the last snapshot still serves (SPEC: read-only
            # serving when this process cannot be the writer).
            mapped = from_os_error(exc, "state")
            if not isinstance(mapped, (StorageReadOnly, StorageFull)):
                raise
            follower, read_only_reason = True, mapped.code
            log.warning("%s: cannot be the index writer; serving the last snapshot read-only", mapped.code)
    reader = SnapshotReader(settings, vault, freshness=_live_freshness(settings, writer))
    warm_snapshot(reader)  # the first question finds the snapshot and its vectors loaded
    return AppContext(
        settings=settings,
        vault=vault,
        reader=reader,
        writer=writer,
        follower=follower,
        read_only_reason=read_only_reason,
    )


def _start_private_state(settings: Settings) -> None:
    """On start: a private state dir (0700, conversations 0600), and no conversation left
    `open` by a server that was killed (ended with reason `server stopped`)."""
    import time

    from vault_agent.conversations.liveness import close_orphans
    from vault_agent.conversations.store import ConversationStore
    from vault_agent.private_dir import make_private_dir, tighten_state_dir

    try:
        make_private_dir(settings.index_dir)
        tighten_state_dir(settings.index_dir, settings.vault)
        close_orphans(ConversationStore(settings.index_dir), time.time)
    except OSError as exc:  # a read-only state dir still serves its last snapshot
        log.warning("state dir upkeep skipped (%s)", type(exc).__name__)


def _live_freshness(settings: Settings, writer: Writer | None) -> FreshnessFn | None:
    """With our own writer, freshness from its in-memory state: writer.json may be
    unwritable (disk full), and a stale reason must reach readers at once."""
    if writer is None:
        return None
    from vault_agent.freshness import compute_freshness, shared_stat_checker

    checker = shared_stat_checker(settings)

    def freshness(manifest: Manifest) -> Freshness:
        state = compute_freshness(settings, manifest, writer.state(), checker)
        return "unknown" if state == "incompatible" else state

    return freshness


def close_context(ctx: AppContext) -> None:
    """Stop the writer (releasing the lock) and close the reader; safe to call twice."""
    writer, ctx.writer = ctx.writer, None
    try:
        hub, ctx.hub = ctx.hub, None
        if hub is not None:
            try:
                hub.close_all()  # its open conversations end with reason `server stopped`
            except OSError as exc:
                log.warning("open conversations not ended (%s)", type(exc).__name__)
        if writer is not None:
            writer.close()
    finally:
        ctx.write_lock.close()  # idempotent; reopened if a write comes after all
        ctx.reader.close()  # idempotent
