"""The MCP server, generated from the operation registry (one tool per operation).

Tools are built with the SDK's `Tool` model directly rather than from a function
signature: the input schema is the snake_case JSON schema of the operation's `Params`
(bounds included), and arguments pass through unvalidated by the SDK so that `invoke`
validates them and every failure comes back as the canonical error object, exactly as on
HTTP and the CLI. Each call returns a `CallToolResult`:
- success: `structuredContent` = the HTTP body, one text block = `dump_json(body)`;
  raw contracts add `_meta = {"indexFreshness", "warnings"}`;
- failure: `isError: true`, text = the error object (also as `structuredContent`).
No resources or prompts are offered.
"""

from __future__ import annotations

import importlib.metadata
import logging
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from vault_agent.api.conversation_mcp import recorded_call
from vault_agent.api.http import coerce_json_text
from vault_agent.api.registry import AppContext, Operation, body_of, dump_json, invoke, operations
from vault_agent.errors import Forbidden, Internal, VaultAgentError

log = logging.getLogger("vault_agent.mcp")

try:
    _version = importlib.metadata.version("vault-agent")
except importlib.metadata.PackageNotFoundError:  # running from a source tree
    _version = "0"

INSTRUCTIONS = (
    "Read-only access to one Markdown vault through a committed index. Start broad and narrow "
    "down: vault_overview, vault_tree, vault_tags, vault_facets for orientation; then outlines "
    "and section metadata of single notes; then targeted reads. Paths are vault-relative. Every "
    "index-backed answer reports indexFreshness; a warning says when the index lags the vault."
)


class _PassThroughArgs(ArgModelBase):
    """Accepts any arguments unchanged: the registry validates them (canonical errors)."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def annotations_of(op: Operation) -> ToolAnnotations:
    """MCP hints: read tools are read-only, idempotent, closed-world; writes say what they do."""
    if op.kind == "read":
        return ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=op.destructive,
        idempotent_hint=op.idempotent,
        open_world_hint=False,
    )


def input_schema_of(op: Operation) -> dict[str, Any]:
    """The snake_case JSON schema of an operation's parameters, with bounds."""
    schema = op.params.model_json_schema(by_alias=False)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def listed_operations(writes_enabled: bool, profile: str) -> list[Operation]:
    """The operations one MCP server lists: by profile, writes only when enabled."""
    profiles = {"default"} if profile == "default" else {"default", "agent-files"}
    return [op for op in operations() if op.profile in profiles and (op.kind == "read" or writes_enabled)]


def call_result(op: Operation, ctx: AppContext, arguments: dict[str, Any]) -> CallToolResult:
    """Run one tool call synchronously and shape its result (success or canonical error)."""
    try:
        outcome = invoke(op, ctx, coerce_json_text(op.params, arguments))
    except VaultAgentError as exc:
        error = exc.to_body()
        return CallToolResult(
            content=[TextContent(type="text", text=dump_json(error))],
            structured_content=error,
            is_error=True,
        )
    except Exception:
        err = Internal()
        log.exception("tool failed", extra={"op": op.name, "incident": err.incident_id})
        error = err.to_body()
        return CallToolResult(
            content=[TextContent(type="text", text=dump_json(error))], structured_content=error, is_error=True
        )
    body = body_of(op, outcome)
    meta = None
    if not op.envelope:
        meta = {"indexFreshness": outcome.freshness, "warnings": [w.model_dump() for w in outcome.warnings]}
    return CallToolResult(
        content=[TextContent(type="text", text=dump_json(body))],
        structured_content=body,
        _meta=meta,
    )


def tool_of(op: Operation, ctx: AppContext) -> Tool:
    """The SDK tool of one operation."""

    async def run(**arguments: Any) -> CallToolResult:
        return await anyio.to_thread.run_sync(call_result, op, ctx, arguments)

    run.__name__ = op.mcp_name
    return Tool(
        fn=run,
        name=op.mcp_name,
        title=None,
        description=op.description,
        parameters=input_schema_of(op),
        fn_metadata=FuncMetadata(arg_model=_PassThroughArgs),
        is_async=True,
        context_kwarg=None,
        annotations=annotations_of(op),
    )


class _VaultMCPServer(MCPServer):
    """MCPServer that answers a call to an unlisted write tool with the canonical FORBIDDEN.

    With writes disabled the write tools are not listed; a client that calls one anyway (an
    old tool list, a guess) gets the same error object as HTTP and the CLI, not "Unknown tool".
    """

    def __init__(
        self,
        *args: Any,
        hidden_writes: frozenset[str] = frozenset(),
        app_ctx: AppContext | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._hidden_writes = hidden_writes
        self._app_ctx = app_ctx  # conversations: every call is recorded in its session's record

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name in self._hidden_writes and self._tool_manager.get_tool(name) is None:
            error = Forbidden(
                "write tools are disabled; start the server with --allow-writes to enable them"
            ).to_body()
            return CallToolResult(
                content=[TextContent(type="text", text=dump_json(error))],
                structured_content=error,
                is_error=True,
            )
        if self._app_ctx is None:
            return await super().call_tool(name, arguments, context)
        parent = super()
        return await recorded_call(
            self._app_ctx, name, arguments, context, lambda: parent.call_tool(name, arguments, context)
        )


def build_mcp_server(ctx: AppContext, *, profile: str | None = None) -> MCPServer:
    """The MCP server of one vault, with the tools of the registry for this profile."""
    chosen = profile or ctx.settings.tool_profile
    listed = listed_operations(ctx.settings.writes_enabled, chosen)
    tools = [tool_of(op, ctx) for op in listed]
    profiles = {"default"} if chosen == "default" else {"default", "agent-files"}
    names = {op.mcp_name for op in listed}
    hidden = frozenset(
        op.mcp_name
        for op in operations()
        if op.kind == "write" and op.profile in profiles and op.mcp_name not in names
    )
    return _VaultMCPServer(
        "vault-agent",
        version=_version,
        instructions=INSTRUCTIONS,
        tools=tools,
        hidden_writes=hidden,
        app_ctx=ctx,
        log_level=ctx.settings.log_level.upper() if ctx.settings.log_level else "INFO",  # type: ignore[arg-type]
    )
