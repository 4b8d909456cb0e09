"""The on/off switch of semantic search: the `semantic` setting (`VAULT_AGENT_SEMANTIC`).

Off: the writer computes no embeddings and search stays lexical without a warning. Declared
in the settings table (vault_agent/config.py); read here from the environment through it.
"""

from __future__ import annotations

from vault_agent.config import SPEC_BY_NAME, env_setting
from vault_agent.errors import InvalidParameter

ENV = SPEC_BY_NAME["semantic"].env

__all__ = ["ENV", "semantic_enabled"]


def semantic_enabled() -> bool:
    try:
        value = env_setting("semantic")
    except InvalidParameter:  # refused at start-up by load_settings; here the default holds
        value = None
    return bool(SPEC_BY_NAME["semantic"].default if value is None else value)
