"""What an operation is, the context it runs in, and the catalog of them.

An `Operation` names one capability on every surface (HTTP route, MCP tool, CLI command) and
binds it to one core function through its adapter. Each `api/ops/<area>.py` declares its
operations as module constants and exports them in `OPERATIONS`; `api/ops/__init__.py`
concatenates those tuples into `CATALOG`, which composition roots hand to every transport.
Nothing registers itself on import: what a transport serves is the catalog it was given.
Running one (`invoke`) and its body (`body_of`) live in `api/invoke.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter, VaultAgentError
from vault_agent.files.lock import WriteLock
from vault_agent.files.models import WriteObserver

if TYPE_CHECKING:
    from vault_agent.contracts import Outcome
    from vault_agent.conversations.hub import ConversationHub
    from vault_agent.indexer.engine import Writer
    from vault_agent.paths import Vault
    from vault_agent.query.snapshot import SnapshotReader


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
    such parameter of the catalog by this mark (tests/api/test_names_table.py)."""


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
    """One capability on every surface, bound to its core by the adapter `func(ctx, params)`."""

    name: str  # catalog key and CLI command name, e.g. "overview", "get-note-outline"
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


class Catalog:
    """The operations a server serves, in one fixed order: HTTP routes, `tools/list`, the
    generated CLI table and docs all follow it.

    Built explicitly (`api.ops.CATALOG`) and passed to each transport as an argument. Code
    that means one operation names its object (`retrieval.SEARCH`); `named` is for a name
    that comes from outside (a test's list of names, a command line).
    """

    def __init__(self, operations: Iterable[Operation]) -> None:
        self.operations = tuple(operations)
        self._by_name: dict[str, Operation] = {}
        for op in self.operations:
            if op.name in self._by_name:
                raise ValueError(f"operation {op.name} is in the catalog twice")
            self._by_name[op.name] = op

    def __iter__(self) -> Iterator[Operation]:
        return iter(self.operations)

    def __len__(self) -> int:
        return len(self.operations)

    def named(self, name: str) -> Operation:
        """The operation called `name` (its CLI command name, e.g. "get-note-outline").

        Raises:
            KeyError: no operation of this catalog has that name.
        """
        return self._by_name[name]

    def of_kind(self, kind: Kind) -> list[Operation]:
        """The read or the write operations, in catalog order."""
        return [op for op in self.operations if op.kind == kind]

    def with_operations(self, *extra: Operation) -> Catalog:
        """This catalog and `extra` after it (a test's own operations beside the real ones)."""
        return Catalog((*self.operations, *extra))
