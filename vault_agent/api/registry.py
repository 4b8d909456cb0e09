"""One registry of operations; HTTP, MCP, CLI and the parity test all iterate over it.

An `Operation` names a capability on every surface and binds it to one core function.
Transports parse → `invoke` → dump; they hold no logic of their own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from vault_agent.api.surface_names import PARAMETER_ERRORS, Surface, reword, validation_error
from vault_agent.config import Settings
from vault_agent.errors import Forbidden, InvalidParameter, VaultAgentError, from_os_error
from vault_agent.files.lock import WriteLock
from vault_agent.files.models import WriteObserver

if TYPE_CHECKING:
    from vault_agent.contracts import Outcome
    from vault_agent.conversations.hub import ConversationHub
    from vault_agent.indexer.engine import Writer
    from vault_agent.paths import Vault
    from vault_agent.query.snapshot import SnapshotReader

log = logging.getLogger("vault_agent.api")


class Params(BaseModel):
    """Base of request models: snake_case names (MCP, CLI), camelCase aliases (HTTP)."""

    # loc_by_alias=False: errors name the snake_case parameter (the MCP/seed name).
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", loc_by_alias=False
    )


class NoParams(Params):
    pass


@dataclass(frozen=True)
class NoteNameMark:
    """Marks a parameter that names a note as people type it: its core function resolves
    it with `names.resolve_name` (path, name, title, alias, [[wikilink]]). Tests find every
    such parameter of the registry by this mark (tests/api/test_names_table.py)."""


NOTE_NAME = NoteNameMark()
NoteName = Annotated[str, NOTE_NAME]  # bounds stay each field's own (the published schemas)


# Lines start_line..end_line of a file, both inclusive: a cited range, lines to delete.
# (No docstring: it would be published in every schema that uses the model.)
class LineRange(Params):
    start_line: int
    end_line: int


def note_name_params(params: type[BaseModel]) -> list[str]:
    """The parameters of a params model that take a note name (NoteName)."""
    return [name for name, info in params.model_fields.items() if NOTE_NAME in info.metadata]


def defaults_to(value: Any, description: str | None = None, **constraints: Any) -> Any:
    """An optional parameter that means `value` when absent (or null): published as the
    schema's `default` (cheaper than saying it in words), kept None in the model so the core
    applies its own default and an explicit null stays accepted."""
    return Field(None, description=description, json_schema_extra={"default": value}, **constraints)


@dataclass
class AppContext:
    """Everything a core function may need, built once by a composition root.

    The files cores see it as `files.models.FilesContext`, the conversation cores as
    `conversations.hub.ConvContext`: structural views of the fields each one reads.
    """

    settings: Settings
    vault: Vault
    reader: SnapshotReader
    writer: Writer | None = None  # the engine when this process is the writer, else None
    clock: Callable[[], datetime] | None = None  # "now" of relative dates (vault_query); None: the system's
    # Serving without being the index writer: another process writes (follower), or the state
    # dir cannot be written (read_only_reason: the error code, e.g. STORAGE_READ_ONLY).
    follower: bool = False
    read_only_reason: str | None = None
    # This process's open conversations, built on first use (conversations.tools.hub_of),
    # which also installs `write_observer` so that each write is recorded for undo.
    hub: ConversationHub | None = None
    conversation_clock: Callable[[], float] | None = (
        None  # the hub's clock; None: time.time (tests inject one)
    )
    write_observer: WriteObserver | None = None
    # Per-snapshot caches of the query cores, keyed (kind, snapshot_id) (query.toolkit.remember).
    snapshot_cache: dict[tuple[str, int], object] = field(default_factory=dict)
    # artifact_audit's last coverage per (tool, artifact, source), for its marginal gain.
    audit_history: dict[tuple[str, str, str], float] = field(default_factory=dict)
    # Orders the read-modify-write of write tools: threads here, other processes by flock.
    write_lock: WriteLock = field(init=False)

    def __post_init__(self) -> None:
        self.write_lock = WriteLock(self.settings.index_dir)


def make_vault(settings: Settings) -> Vault:
    """The one constructor of a settings' Vault lives in the kernel; kept here under its old name."""
    from vault_agent.paths import vault_for_settings

    return vault_for_settings(settings)


Kind = Literal["read", "write"]
# Answers of about 6,000 tokens at most, unless an operation declares more (a read of
# 100,000 characters of text, a folder tree of 500 nodes).
ANSWER_BUDGET_DEFAULT = 25_000


@dataclass(frozen=True)
class CliOption:
    """A CLI flag of a server-backed command and where its value goes in the params.

    Without any declared options, the CLI offers every top-level scalar field of the
    params model as `--field-name`. Declared options replace that for ops whose params
    are nested (e.g. `read PATH --start 1 --end 40` → range.start_line / range.end_line).
    """

    flag: str  # e.g. "--start"
    target: str  # dotted params path, e.g. "range.start_line"
    type: type = str  # str | int | float | bool
    help: str = ""
    multiple: bool = False  # repeatable flag → list value
    convert: Callable[[Any], Any] | None = None  # e.g. "12-20" → {"start_line": 12, "end_line": 20}
    human_default: Any = None  # sent when the flag is absent and the output is for people (not --json)


@dataclass(frozen=True)
class Operation:
    name: str  # registry key and CLI command name, e.g. "overview", "get-note-outline"
    mcp_name: str  # e.g. "vault_overview"
    http_method: Literal["GET", "POST"]
    http_path: str  # e.g. "/overview"
    params: type[Params]
    func: Callable[[AppContext, Any], Outcome[Any]]
    description: str  # MCP description; first sentence: what it is for and when to prefer it (docs/mcp.md)
    kind: Kind = "read"
    envelope: bool = True  # False: versioned raw contract (seeds 001/004)
    destructive: bool = False
    # A read-kind operation that still changes something outside the vault (a message to the
    # user, the end of a conversation): listed without --allow-writes, hinted as not read-only
    # and not idempotent so that a client does not retry it blindly.
    side_effect: bool = False
    idempotent: bool = True
    cli_args: tuple[str, ...] = ()  # params taken positionally on the CLI, in order
    cli_help: str = ""  # one-line CLI summary + example
    cli_options: tuple[CliOption, ...] = ()
    render: Callable[[Any], str] | None = None  # compact human output for the CLI
    limit_error: type[VaultAgentError] = InvalidParameter
    profile: Literal["default", "agent-files"] = "default"  # agent-files ops are listed only in that profile
    mcp_only: bool = False  # seed 003 aliases: MCP tools with no HTTP route or CLI command
    # False: an operation for the person, not the agent (answering the agent's question):
    # an HTTP route (its CLI is a local `conversations` command), never an MCP tool.
    agent_tool: bool = True
    title: str = ""  # short human name shown by MCP clients, e.g. "Folder tree"
    # Model of `data` (envelope) or of the raw body: the tool's documented answer shape.
    result: type[BaseModel] | None = None
    long_running: bool = False  # may take seconds: MCP sends progress while it runs (writes always may)
    # (core name, this tool's name) of parameters a shared core function names otherwise in its
    # messages, e.g. seed 003's search_files passes `max_results` as vault_search's `limit`.
    core_params: tuple[tuple[str, str], ...] = ()
    # The most characters one answer (the JSON body) may take at the largest parameters:
    # listings page to stay within it; tests/api/test_param_table.py checks every operation
    # on a wide synthetic vault, docs/mcp.md lists them.
    max_answer_chars: int = ANSWER_BUDGET_DEFAULT
    # The route also answers the other method: a POST op then takes its parameters in the
    # query string by GET too (vault_query: GET and POST /query, SPEC).
    http_both: bool = False


REGISTRY: dict[str, Operation] = {}


def register(op: Operation) -> Operation:
    if op.name in REGISTRY:
        raise ValueError(f"operation {op.name} registered twice")
    REGISTRY[op.name] = op
    return op


def operations(kind: Kind | None = None) -> list[Operation]:
    """All registered operations (importing the modules that register them)."""
    from vault_agent.api import ops  # noqa: F401  (registers on import)

    return [op for op in REGISTRY.values() if kind is None or op.kind == kind]


def parse_params(op: Operation, raw: dict[str, Any], surface: Surface = "mcp") -> Params:
    """Validate raw parameters; the error names the parameter as `surface` spells it and
    says what is allowed, in our words (`surface_names`), never echoing the value.

    Raises:
        InvalidParameter / InvalidLimit: a value is missing, malformed or out of range.
    """
    try:
        return op.params.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(op, exc, surface, raw) from None


def invoke(op: Operation, ctx: AppContext, raw: dict[str, Any], surface: Surface = "mcp") -> Outcome[Any]:
    """Check that the operation is allowed, validate its params and run it.

    `surface` is who called (MCP, HTTP or the CLI through HTTP): parameter names in error
    messages are spelled its way (`surface_names.reword`). Unexpected exceptions pass
    through: the transport's translator turns them into INTERNAL.

    Raises:
        Forbidden: a write operation while writes are disabled (checked first, on every surface).
        VaultAgentError: the typed error of the failure.
    """
    if op.kind == "write" and not ctx.settings.writes_enabled:
        raise Forbidden("write tools are disabled; start the server with --allow-writes to enable them")
    params = parse_params(op, raw, surface)
    try:
        return op.func(ctx, params)
    except PARAMETER_ERRORS as exc:
        raise reword(op, exc, surface, raw) from None
    except OSError as exc:
        mapped = from_os_error(exc, "vault")  # e.g. a note whose permissions deny reading
        if mapped is None:
            raise  # unexpected: the transport's translator turns it into INTERNAL
        raise mapped from None


def dump_json(obj: Any) -> str:
    """The one serializer of response bodies: deterministic, UTF-8, compact."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def body_of(op: Operation, outcome: Outcome[Any]) -> dict[str, Any]:
    """The HTTP body (= MCP structuredContent = CLI --json) of a successful call."""
    data = to_jsonable(outcome.data)
    if not op.envelope:
        return data  # type: ignore[no-any-return]
    return {"data": data, "warnings": [w.model_dump() for w in outcome.warnings]}
