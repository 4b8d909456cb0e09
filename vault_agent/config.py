"""Settings, declared once: name, default, environment variable, config-file key, help.

Precedence (SPEC.md): CLI flag > environment (`VAULT_AGENT_*`) > config file (`--config`,
else `<vault>/.vault-agent/config.toml`) > defaults. Only composition roots (the CLI entry,
`serve`, `mcp`) call `load_settings`; everything else receives a `Settings`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from vault_agent.errors import InvalidParameter


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


def _default(name: str) -> Any:
    """The declared default of a setting (lists as tuples), so `Settings` repeats no value."""
    spec = SPEC_BY_NAME[name]
    return tuple(spec.default) if spec.kind == "list" else spec.default


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one process; immutable (change one with `dataclasses.replace`).

    A frozen dataclass rather than a pydantic model: every CLI call builds one, and a
    server-backed command otherwise imports nothing of pydantic (about half its start-up
    CPU). `__post_init__` keeps the two coercions callers rely on: paths and tuples.
    """

    vault: Path
    index_dir: Path
    extensions: tuple[str, ...] = _default("extensions")
    exclude: tuple[str, ...] = _default("exclude")
    server: str | None = _default("server")  # None: see server_address.server_url
    token: str | None = _default("token")
    host: str = _default("host")
    port: int = _default("port")
    allowed_hosts: tuple[str, ...] = _default("allowed_hosts")
    allowed_origins: tuple[str, ...] = _default("allowed_origins")
    header_timeout_seconds: int = _default("header_timeout_seconds")
    body_timeout_seconds: int = _default("body_timeout_seconds")
    max_connections: int = _default("max_connections")
    max_unauthenticated_connections: int = _default("max_unauthenticated_connections")
    max_body_buffer_mb: int = _default("max_body_buffer_mb")
    writes_enabled: bool = _default("writes_enabled")
    tool_profile: str = _default("tool_profile")
    debounce_ms: int = _default("debounce_ms")
    recheck_seconds: int = _default("recheck_seconds")
    index_workers: int = _default("index_workers")
    log_level: str = _default("log_level")
    semantic: bool = _default("semantic")
    embed_threads: int = _default("embed_threads")
    conversations_idle_minutes: int = _default("conversations_idle_minutes")
    conversations_retention: int = _default("conversations_retention")
    conversations_reply_timeout_seconds: int = _default("conversations_reply_timeout_seconds")
    conversations_record_queries: bool = _default("conversations_record_queries")

    def __post_init__(self) -> None:
        object.__setattr__(self, "vault", Path(self.vault))
        object.__setattr__(self, "index_dir", Path(self.index_dir))
        for spec_field in fields(self):
            spec = SPEC_BY_NAME.get(spec_field.name)
            value = getattr(self, spec_field.name)
            if spec is not None and spec.kind == "list" and not isinstance(value, tuple):
                object.__setattr__(self, spec_field.name, tuple(value))

    @property
    def token_file(self) -> Path:
        return self.index_dir / "token"

    def index_fingerprint(self) -> str:
        """Hash of every setting that changes what the index contains."""
        payload = json.dumps(
            {"extensions": sorted(e.lower() for e in self.extensions), "exclude": list(self.exclude)},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def index_dir_in_vault(self) -> str | None:
        """The state dir's vault-relative path when it lives inside the vault (then excluded)."""
        try:
            rel = self.index_dir.resolve().relative_to(self.vault.resolve())
        except ValueError:
            return None
        return rel.as_posix() or None


def _coerce(spec: SettingSpec, value: Any, source: str) -> Any:
    try:
        if value is None:
            return None
        if spec.kind == "path":
            return Path(os.path.expanduser(str(value)))
        if spec.kind == "int":
            return int(value)
        if spec.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(value)
        if spec.kind == "list":
            if isinstance(value, str):
                return tuple(v.strip() for v in value.split(",") if v.strip())
            return tuple(str(v) for v in value)
        return str(value)
    except (TypeError, ValueError):
        raise InvalidParameter(f"setting '{spec.name}' from {source} has an invalid value") from None


def _toml_get(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse a TOML config file.

    Raises:
        InvalidParameter: the file is not valid TOML.
    """
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError:
        raise InvalidParameter("the config file is not valid TOML") from None


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Resolve settings from flags > env > config file > defaults.

    Raises:
        InvalidParameter: a value cannot be parsed, or `--config` names a missing file.
    """
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    env = os.environ if env is None else env
    values = _from_flags_and_env(flags, env)
    vault = Path(values.get("vault") or (cwd or Path.cwd()))
    file_data = _config_file_data(flags.get("config") or env.get("VAULT_AGENT_CONFIG"), vault)
    for spec in SETTINGS:
        if spec.name in values or not spec.toml_key:
            continue
        raw = _toml_get(file_data, spec.toml_key)
        if raw is not None:
            values[spec.name] = _coerce(spec, raw, "the config file")
    values["vault"] = vault
    index_dir = values.get("index_dir")
    if index_dir is None:
        index_dir = vault / ".vault-agent"
    elif not Path(index_dir).is_absolute():
        index_dir = (cwd or Path.cwd()) / index_dir
    values["index_dir"] = Path(index_dir)
    for spec in SETTINGS:
        if spec.name not in values and spec.default is not None:
            values[spec.name] = _default(spec.name)
    values = {k: v for k, v in values.items() if v is not None}
    _check_ranges(values)
    return Settings(**values)


def _from_flags_and_env(flags: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """The settings the command line or the environment set (the command line wins)."""
    values: dict[str, Any] = {}
    for spec in SETTINGS:
        if spec.name in flags:
            values[spec.name] = _coerce(spec, flags[spec.name], "the command line")
        elif env.get(spec.env) not in (None, ""):
            values[spec.name] = _coerce(spec, env[spec.env], spec.env)
    return values


def _config_file_data(explicit: str | None, vault: Path) -> dict[str, Any]:
    """The `--config` file, else the vault's own config.toml when present, else nothing.

    Raises:
        InvalidParameter: `--config` names a missing file, or the file is not valid TOML.
    """
    path = Path(explicit) if explicit else vault / ".vault-agent" / "config.toml"
    if path.is_file():
        return read_config_file(path)
    if explicit:
        raise InvalidParameter("the config file given with --config does not exist")
    return {}


AT_LEAST_ONE = (
    "conversations_idle_minutes",
    "conversations_retention",
    "conversations_reply_timeout_seconds",
    "header_timeout_seconds",
    "body_timeout_seconds",
    "max_connections",
    "max_unauthenticated_connections",
    "max_body_buffer_mb",
)


def _check_ranges(values: Mapping[str, Any]) -> None:
    """Raises: InvalidParameter naming the first setting out of its range."""
    if not 1 <= values["recheck_seconds"] <= MAX_RECHECK_SECONDS:
        raise InvalidParameter(f"recheck_seconds must be between 1 and {MAX_RECHECK_SECONDS}")
    if not 1 <= values["embed_threads"] <= MAX_EMBED_THREADS:
        raise InvalidParameter(f"VAULT_AGENT_EMBED_THREADS must be between 1 and {MAX_EMBED_THREADS}")
    if not 1 <= values["index_workers"] <= MAX_INDEX_WORKERS:
        raise InvalidParameter(f"index.workers must be between 1 and {MAX_INDEX_WORKERS}")
    for name in AT_LEAST_ONE:
        if values[name] < 1:
            raise InvalidParameter(f"{name} must be at least 1")
    if values["tool_profile"] not in TOOL_PROFILES:
        raise InvalidParameter("tool_profile must be 'default' or 'agent-files'")


def env_setting(name: str, env: Mapping[str, str] | None = None) -> Any:
    """One setting from the environment alone (None when unset), through the settings table.

    For the console script's first line, before flags and the config file are read.

    Raises:
        InvalidParameter: the variable's value cannot be parsed.
    """
    spec = SPEC_BY_NAME[name]
    env = os.environ if env is None else env
    raw = env.get(spec.env)
    return None if raw in (None, "") else _coerce(spec, raw, spec.env)
