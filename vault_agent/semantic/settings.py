"""The on/off switch of semantic search (`semantic`, `VAULT_AGENT_SEMANTIC`) and the
embedder's threads (`embed_threads`, `VAULT_AGENT_EMBED_THREADS`).

Off: the writer computes no embeddings and search stays lexical without a warning. Both are
declared in the settings table (vault_agent/config.py); read here from the environment
through it, since the semantic readers get no Settings.
"""

from __future__ import annotations

from typing import Any

from vault_agent.config import env_setting
from vault_agent.errors import InvalidParameter
from vault_agent.setting_specs import MAX_EMBED_THREADS, SPEC_BY_NAME

ENV = SPEC_BY_NAME["semantic"].env
THREADS_ENV = SPEC_BY_NAME["embed_threads"].env

__all__ = ["ENV", "THREADS_ENV", "embed_threads", "semantic_enabled"]


def _setting(name: str) -> Any:
    """The environment's value, else the declared default (a bad value is refused at
    start-up by load_settings; here the default holds rather than stopping the writer)."""
    try:
        value = env_setting(name)
    except InvalidParameter:
        value = None
    return SPEC_BY_NAME[name].default if value is None else value


def semantic_enabled() -> bool:
    return bool(_setting("semantic"))


def embed_threads() -> int:
    """Threads the background embedder uses (the model scales with cores: numpy releases
    the GIL)."""
    threads = int(_setting("embed_threads"))
    return threads if 1 <= threads <= MAX_EMBED_THREADS else int(SPEC_BY_NAME["embed_threads"].default)
