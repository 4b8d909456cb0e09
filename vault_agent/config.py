"""Settings resolved for one process from the declared specs (setting_specs.py).

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
from vault_agent.setting_specs import (
    MAX_EMBED_THREADS,
    MAX_INDEX_WORKERS,
    MAX_RECHECK_SECONDS,
    SETTINGS,
    SPEC_BY_NAME,
    TOOL_PROFILES,
    SettingSpec,
)


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
    model_cache: Path | None = _default("model_cache")  # read from the environment where the model loads
    e5_weights: str | None = _default("e5_weights")  # likewise (semantic/e5_weights.py)
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
