"""How fresh a snapshot of one state dir is, for the reader's answers (`indexFreshness`):
what the writer publishes in `writer.json`, else this process's stat scan of the vault
(freshness.py), or a function the composition root gives (the in-process writer's state).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vault_agent.config import Settings
from vault_agent.contracts import Freshness, Manifest
from vault_agent.freshness import (
    compute_freshness,
    read_writer_state,
    shared_stat_checker,
    stale_reason,
    writer_alive,
)

FreshnessFn = Callable[[Manifest], Freshness]


class SnapshotFreshness:
    """Freshness of the snapshots of `settings.index_dir` (`freshness`: given, else computed)."""

    def __init__(self, settings: Settings, freshness: FreshnessFn | None = None) -> None:
        self.settings = settings
        self._state_dir = Path(settings.index_dir)
        self._freshness_fn = freshness
        self._stat_checker = shared_stat_checker(settings)

    def of(self, manifest: Manifest) -> Freshness:
        """State of the pinned snapshot now: the writer's published state, else a stat scan
        (the first one per snapshot inline, then in the background at most every recheck_seconds)."""
        if self._freshness_fn is not None:
            return self._freshness_fn(manifest)
        state = compute_freshness(
            self.settings, manifest, read_writer_state(self._state_dir), self._stat_checker
        )
        if state == "unknown":
            # No stat scan of this snapshot yet (first request after start or after a new
            # commit): scan now rather than answer "unknown" for an unmodified vault.
            state = self._stat_checker.check(manifest, force=True)
        # An incompatible snapshot never reaches here (acquire raises); keep the type closed.
        return "unknown" if state == "incompatible" else state

    def stale_reason(self) -> str | None:
        """Why the current snapshot is stale, when the writer or the stat scan knows."""
        return stale_reason(read_writer_state(self._state_dir), self._stat_checker)

    def recheck(self, manifest: Manifest) -> Freshness:
        """Force a stat scan of `manifest` now (status on demand)."""
        if self._freshness_fn is not None:
            return self._freshness_fn(manifest)
        writer = read_writer_state(self._state_dir)
        if writer_alive(writer) and writer is not None and writer.watching:
            return compute_freshness(self.settings, manifest, writer, self._stat_checker)
        if writer_alive(writer) and writer is not None and writer.phase == "building":
            return "updating"
        return self._stat_checker.check(manifest, force=True)
