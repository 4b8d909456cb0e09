"""Index state operation: `status` (GET /status, MCP vault_status)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vault_agent.api.human.status import render_status
from vault_agent.api.registry import AppContext, NoParams, Operation, register
from vault_agent.contracts import Outcome
from vault_agent.lazy import lazy_functions
from vault_agent.query.models import StatusData

if TYPE_CHECKING:
    from vault_agent.query.status import index_status
else:  # the core is imported on first call (the CLI imports this module for the registry)
    (index_status,) = lazy_functions("vault_agent.query.status", "index_status")


def _status(ctx: AppContext, params: Any) -> Outcome[Any]:
    return index_status(ctx.settings, reader=ctx.reader)


register(
    Operation(
        name="status",
        mcp_name="vault_status",
        http_method="GET",
        http_path="/status",
        params=NoParams,
        func=_status,
        description="Index freshness and counts; use it when answers look outdated.",
        title="Index status",
        result=StatusData,
        cli_help="State of the index (works without a server).",
        render=render_status,
    )
)
