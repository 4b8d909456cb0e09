"""What semantic needs of the query side's snapshot objects, as Protocols.

semantic may not import vault_agent.query (tests/kernel/test_boundaries.py), yet its entry
points take the query side's `SnapshotReader` and `SnapshotView`. These Protocols name the
few members semantic reads; both classes satisfy them structurally, so callers pass them
unchanged and mypy checks the match.
"""

from __future__ import annotations

from typing import Protocol

from vault_agent.config import Settings
from vault_agent.contracts import Manifest

__all__ = ["PinnedManifest", "SettingsSource", "SnapshotLoader"]


class SettingsSource(Protocol):
    """A snapshot reader as semantic sees it: its settings give the index dir; the object
    itself keys the per-reader vector cache (snapshot_vectors.py)."""

    @property
    def settings(self) -> Settings: ...


class SnapshotLoader(SettingsSource, Protocol):
    """A snapshot reader that can load its current snapshot (warmup.py)."""

    def current_manifest(self) -> Manifest | None: ...


class PinnedManifest(Protocol):
    """A request's pinned snapshot (a snapshot view): the manifest it answers from."""

    @property
    def manifest(self) -> Manifest: ...
