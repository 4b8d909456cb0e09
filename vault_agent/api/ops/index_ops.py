"""Index state operation: `status` (GET /status, MCP vault_status)."""

from __future__ import annotations

from vault_agent.api.human.status import render_status
from vault_agent.api.operation import AppContext, NoParams, Operation
from vault_agent.contracts import Outcome
from vault_agent.query.models import StatusData
from vault_agent.query.status import index_status


def _status(ctx: AppContext, params: NoParams) -> Outcome[StatusData]:
    return index_status(ctx.settings, reader=ctx.reader)


STATUS = Operation(
    name="status",
    mcp_name="vault_status",
    http_method="GET",
    http_path="/status",
    params=NoParams,
    func=_status,
    description="Use it when answers look outdated.",
    title="Index status",
    result=StatusData,
    cli_help="State of the index (works without a server).",
    render=render_status,
)

OPERATIONS: tuple[Operation, ...] = (STATUS,)
