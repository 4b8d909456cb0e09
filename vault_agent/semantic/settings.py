"""The on/off switch of semantic search: `VAULT_AGENT_SEMANTIC` = `on` (default) | `off`,
and the embedder's threads: `VAULT_AGENT_EMBED_THREADS` (default: the CPU count, at most 4).

Off: the writer computes no embeddings and search stays lexical without a warning.
An environment switch (not a config-file key) keeps the shared Settings model untouched.
"""

from __future__ import annotations

import os

ENV = "VAULT_AGENT_SEMANTIC"
THREADS_ENV = "VAULT_AGENT_EMBED_THREADS"
MAX_DEFAULT_THREADS = 4

__all__ = ["ENV", "THREADS_ENV", "embed_threads", "semantic_enabled"]


def semantic_enabled() -> bool:
    return os.environ.get(ENV, "on").strip().lower() not in {"off", "0", "false", "no"}


def embed_threads() -> int:
    """Threads the background embedder uses (the model scales with cores: numpy releases
    the GIL). A bad value falls back to the default rather than stopping the writer."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return min(int(raw), 64)
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_THREADS))
