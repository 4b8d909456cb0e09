"""The MCP server, generated from the operation catalog it is given (one tool per operation).

Built on the SDK's low-level `Server` with `on_list_tools` / `on_call_tool` handlers (its
public API for servers that bring their own schemas): the input schema is the compact
snake_case schema of the operation's `Params` (`tool_schema`), the output schema comes
from its result model, and arguments reach `invoke` unvalidated by the SDK so that every
failure is the canonical error object, exactly as on HTTP and the CLI. Each call returns
a `CallToolResult`:
- success: `structuredContent` = the HTTP body, one text block = `dump_json(body)`;
  raw contracts add `_meta = {"indexFreshness", "warnings"}`;
- failure: `isError: true`, text = the error object (also as `structuredContent`), with
  hints that name MCP tools (`hints.Hints.for_mcp`).
Long calls report progress when the client sent a progress token. The same server speaks
the 2025 initialize handshake and the stateless 2026-07-28 revision (the SDK serves both).
No resources or prompts are offered.
"""

from __future__ import annotations

import importlib.metadata
import logging
import time
import warnings
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    EmptyResult,
    ListToolsResult,
    PaginatedRequestParams,
    SetLevelRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

from vault_agent.api.conversation_mcp import recorded_call, set_log_level
from vault_agent.api.hints import Hints
from vault_agent.api.invoke import body_of, dump_json, invoke
from vault_agent.api.operation import AppContext, Catalog, Operation
from vault_agent.api.param_text import coerce_json_text
from vault_agent.api.stdio_guard import AnsweringReadStream
from vault_agent.api.tool_schema import input_schema
from vault_agent.errors import Forbidden, InvalidParameter, VaultAgentError, internal_error

log = logging.getLogger("vault_agent.mcp")

try:
    _version = importlib.metadata.version("vault-agent")
except importlib.metadata.PackageNotFoundError:  # running from a source tree
    _version = "0"

PROGRESS_INTERVAL_S = 1.0  # how often a long call tells a waiting client it is still working

INSTRUCTIONS = (
    "One Markdown vault (Obsidian-style notes), served from a committed index. Orient first "
    "(vault_overview, vault_tree, vault_tags, vault_facets), then narrow: search ranks passages by "
    "relevance; vault_search lists exact text or regex matches line by line; vault_query selects "
    "notes by what they are (tags, properties, dates, links); vault_find runs a find-then-read loop "
    "and says what to read next. Read with vault_read (line ranges, or a section_id from "
    "get_note_outline) or vault_scan (chunks). Dates are ISO (2026-01-31) or an age (7d, 2w, 3mo). "
    "Paths are vault-relative with '/'; a note may also be named by file name, title, alias or "
    "[[wikilink]] (one match answers, several are AMBIGUOUS); protected folders (.obsidian, .git, "
    ".trash, .vault-agent, .smarthole) are refused. Answers come from the last committed snapshot: "
    "indexFreshness says how current it is and a warning says what to do when it lags. Envelope "
    "tools answer {data, warnings}; long listings come in pages (pass next_cursor back as cursor); errors "
    "are {error: {code, message}} and the message says what to call next."
)
WRITE_INSTRUCTIONS = (
    " Writes are atomic and take dry_run (show the diff, change nothing), expected_sha256 (CONFLICT "
    "if the file changed since you read it; every write returns the new sha256) and wait_for_index "
    "(return once the index holds the write). .system/ is read-only; daily/ notes are append-only."
)


def annotations_of(op: Operation) -> ToolAnnotations:
    """MCP hints: read tools are read-only and idempotent (seed 000); writes say what they do.

    `openWorldHint` (false: the vault is a closed domain) is sent for writes only, where a
    client may weigh it before a side effect; on read tools it would cost 440 characters of
    every default `tools/list` for a hint no client acts on.
    """
    if op.kind == "read" and op.side_effect:  # e.g. send_message: delivers, never edits the vault
        # Not read-only and not idempotent are MCP's defaults: only "not destructive" is said.
        return ToolAnnotations(destructive_hint=False)
    if op.kind == "read":
        return ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=op.destructive,
        idempotent_hint=op.idempotent,
        open_world_hint=False,
    )


def input_schema_of(op: Operation) -> dict[str, Any]:
    """The snake_case JSON schema of an operation's parameters, with bounds."""
    return input_schema(op.params)


def tool_of(op: Operation) -> Tool:
    """The MCP tool definition of one operation: name, title, description, input schema,
    annotations.

    Every character of `tools/list` is paid in each agent session (the default list stays
    under 12,000 characters, issue 33): the `title` says what a tool does (clients show it in
    their pickers and approval dialogs, MCP 2025-06-18), so the description says when to use
    it; the tools' shared rules are said once in `instructions`. No `outputSchema` (envelope
    tools: `{data, warnings}` is said once in `instructions`; raw contracts: their required
    top-level fields): docs/mcp.md lists each tool's full result model.
    """
    return Tool(
        name=op.mcp_name,
        title=op.title,
        description=op.description,
        input_schema=input_schema_of(op),
        annotations=annotations_of(op),
    )


def listed_operations(catalog: Catalog, writes_enabled: bool, profile: str) -> list[Operation]:
    """The operations of `catalog` one MCP server lists: by profile, writes only when enabled."""
    profiles = {"default"} if profile == "default" else {"default", "agent-files"}
    return [
        op
        for op in catalog
        if op.agent_tool and op.profile in profiles and (op.kind == "read" or writes_enabled)
    ]


def error_result(exc: VaultAgentError, hints: Hints) -> CallToolResult:
    """A canonical error as a tool result (`isError`), hints rewritten for MCP callers."""
    error = hints.for_mcp(exc.to_body())
    return CallToolResult(
        content=[TextContent(type="text", text=dump_json(error))], structured_content=error, is_error=True
    )


def call_result(op: Operation, ctx: AppContext, arguments: dict[str, Any], hints: Hints) -> CallToolResult:
    """Run one tool call synchronously and shape its result (success or canonical error)."""
    try:
        outcome = invoke(op, ctx, coerce_json_text(op.params, arguments), "mcp")
    except VaultAgentError as exc:
        return error_result(exc, hints)
    except Exception:  # noqa: BLE001  the MCP translator: anything unexpected is INTERNAL with an id
        return error_result(internal_error(log, "tool failed", op=op.name), hints)
    body = body_of(op, outcome)
    meta = None
    if not op.envelope:
        meta = {"indexFreshness": outcome.freshness, "warnings": [w.model_dump() for w in outcome.warnings]}
    return CallToolResult(
        content=[TextContent(type="text", text=dump_json(body))],
        structured_content=body,
        _meta=meta,
    )


async def run_with_progress(
    ctx: ServerRequestContext[Any, Any],
    op: Operation,
    app: AppContext,
    arguments: dict[str, Any],
    hints: Hints,
) -> CallToolResult:
    """Run a long call in a worker thread, reporting progress (seconds elapsed) until it ends.

    `report_progress` is a no-op unless the client sent a progress token, so clients that
    did not ask pay nothing.
    """
    started = time.monotonic()
    result: list[CallToolResult] = []

    async def work() -> None:
        result.append(await anyio.to_thread.run_sync(call_result, op, app, arguments, hints))
        tasks.cancel_scope.cancel()

    await ctx.session.report_progress(0, None, f"{op.mcp_name} started")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(work)
        while True:
            await anyio.sleep(PROGRESS_INTERVAL_S)
            elapsed = round(time.monotonic() - started, 1)
            await ctx.session.report_progress(elapsed, None, f"{op.mcp_name} still working ({elapsed:g} s)")
    elapsed = round(time.monotonic() - started, 1)
    await ctx.session.report_progress(max(elapsed, 0.1), max(elapsed, 0.1), f"{op.mcp_name} done")
    return result[0]


class VaultMcpServer(Server[Any]):
    """The MCP server of one vault: the tools of its catalog for one profile."""

    def __init__(
        self, app: AppContext, listed: list[Operation], hidden_writes: frozenset[str], hints: Hints
    ) -> None:
        # send_message notifies with `notifications/message`, so `logging` is declared (the SDK
        # declares it when logging/setLevel is served). The SDK warns that logging is deprecated
        # as of 2026-07-28; sessions of the 2025 revisions still need it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(
                "vault-agent",
                version=_version,
                title="vault-agent",
                instructions=INSTRUCTIONS + (WRITE_INSTRUCTIONS if app.settings.writes_enabled else ""),
                get_tool_input_schema=self._input_schema,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_set_logging_level=self._set_logging_level,
            )
        self.app = app
        self.by_name = {op.mcp_name: op for op in listed}
        self.tools = [tool_of(op) for op in listed]
        self.hidden_writes = hidden_writes
        self.hints = hints

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        op = self.by_name.get(name)
        return None if op is None else input_schema_of(op)

    async def _set_logging_level(
        self, ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        set_log_level(ctx.session, params.level)
        return EmptyResult()

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self.tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        op = self.by_name.get(params.name)
        if op is None:
            # A write tool that is off (an old tool list, a guess) gets the same FORBIDDEN as
            # HTTP and the CLI; any other name is a parameter error naming the way out.
            if params.name in self.hidden_writes:
                return error_result(
                    Forbidden(
                        "write tools are disabled; start the server with --allow-writes to enable them"
                    ),
                    self.hints,
                )
            return error_result(
                InvalidParameter("unknown tool; call tools/list for the tools of this server"), self.hints
            )
        arguments = dict(params.arguments or {})

        async def run() -> CallToolResult:
            if op.kind == "write" or op.long_running:
                return await run_with_progress(ctx, op, self.app, arguments, self.hints)
            return await anyio.to_thread.run_sync(call_result, op, self.app, arguments, self.hints)

        # Conversations (seed 003): every call is one line of its session's record.
        result: CallToolResult = await recorded_call(self.app, params.name, arguments, ctx, run)
        return result

    async def run_stdio_async(self) -> None:
        """Serve MCP over this process's stdin/stdout until the client closes it."""
        async with stdio_server() as (read_stream, write_stream):
            # A batch or a malformed line gets a JSON-RPC error, not silence (stdio_guard).
            answering = AnsweringReadStream(read_stream, write_stream)
            await self.run(answering, write_stream, self.create_initialization_options())


def build_mcp_server(ctx: AppContext, catalog: Catalog, *, profile: str | None = None) -> VaultMcpServer:
    """The MCP server of one vault, with the tools of `catalog` for this profile."""
    chosen = profile or ctx.settings.tool_profile
    listed = listed_operations(catalog, ctx.settings.writes_enabled, chosen)
    profiles = {"default"} if chosen == "default" else {"default", "agent-files"}
    names = {op.mcp_name for op in listed}
    hidden = frozenset(
        op.mcp_name
        for op in catalog
        if op.kind == "write" and op.profile in profiles and op.mcp_name not in names
    )
    return VaultMcpServer(ctx, listed, hidden, Hints(catalog))
