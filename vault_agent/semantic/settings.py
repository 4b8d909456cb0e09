"""The on/off switch of semantic search: `VAULT_AGENT_SEMANTIC` = `on` (default) | `off`.

Off: the writer computes no embeddings and search stays lexical without a warning.
An environment switch (not a config-file key) keeps the shared Settings model untouched.
"""

from __future__ import annotations

import os

ENV = "VAULT_AGENT_SEMANTIC"

__all__ = ["ENV", "semantic_enabled"]


def semantic_enabled() -> bool:
    return os.environ.get(ENV, "on").strip().lower() not in {"off", "0", "false", "no"}
