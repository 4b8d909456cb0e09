"""Warm a fresh server's semantic search while it starts (issue 22: the first answer fast).

A desktop client starts `vault-agent mcp` and asks its first question right after the
handshake; without warming, that question paid for the model load (~1.5 s for USE: its
tokenizer and weights) and for the snapshot's vectors. `warm_model(settings)` loads the
model on a background thread as soon as the process knows it will need it (the snapshot
has embeddings); `warm_snapshot(reader)` then loads the current snapshot and its vectors
(mapped from disk, store.py) into the reader. Both return at once; a request that comes
first simply waits for the same loads (load_encoder and the caches are locked), so warming
never makes an answer slower. Nothing happens when semantic search is off, and the model
is not loaded for an index without embeddings (a lexical-only server keeps its memory).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from vault_agent.config import Settings
from vault_agent.freshness import read_current_manifest
from vault_agent.semantic.encoder import active_model, load_encoder
from vault_agent.semantic.ports import SnapshotLoader
from vault_agent.semantic.progress import semantic_state
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.snapshot_vectors import snapshot_vectors

log = logging.getLogger("vault_agent.semantic")

__all__ = ["warm_model", "warm_snapshot"]


def _has_embeddings(index_dir: Path) -> bool:
    manifest = read_current_manifest(index_dir)
    return manifest is not None and semantic_state(manifest, load_model=False).embedded_notes > 0


def _in_background(name: str, job: Callable[[], object]) -> threading.Thread:
    def run() -> None:
        try:
            job()
        except Exception:  # noqa: BLE001 - warming is an optimisation: the first request loads instead
            log.debug("warming %s failed; the first request loads it", name, exc_info=True)

    thread = threading.Thread(target=run, name=f"vault-agent-warm-{name}", daemon=True)
    thread.start()
    return thread


def warm_model(settings: Settings) -> threading.Thread | None:
    """Load the embedding model in the background when the index has embeddings."""
    if not semantic_enabled() or not _has_embeddings(settings.index_dir):
        return None
    return _in_background("model", load_encoder)


def _load_snapshot(reader: SnapshotLoader) -> None:
    manifest = reader.current_manifest()  # loads the snapshot (tables, engine) into the reader
    model = active_model().model_id
    if manifest is not None and model is not None:
        snapshot_vectors(reader, manifest, model)


def warm_snapshot(reader: SnapshotLoader) -> threading.Thread | None:
    """Load the reader's current snapshot and its vectors in the background when the index
    has embeddings."""
    if not semantic_enabled() or not _has_embeddings(reader.settings.index_dir):
        return None
    return _in_background("snapshot", lambda: _load_snapshot(reader))
