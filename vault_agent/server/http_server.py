"""The running HTTP server of one vault: the catalog's routes, MCP at `/mcp`, the web page at `/`.

The composition of the transports: `start_server` hands the operation catalog to the HTTP
app and the MCP server and mounts the owner's page (`vault_agent/web`) beside them, so that
`api` never knows the page exists.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiohttp import web

from vault_agent.api.asgi_bridge import McpBridge
from vault_agent.api.connections import AcceptErrorLog
from vault_agent.api.http import GUARD_KEY, build_http_app
from vault_agent.api.http_limits import JsonErrorAppRunner, handler_args
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext, Catalog
from vault_agent.api.ops import CATALOG
from vault_agent.api.security import AccessPolicy, check_bind_allowed, keep_token_file, read_or_create_token
from vault_agent.web.mount import mount_web_page


@dataclass
class RunningServer:
    """A started aiohttp server: its runner, the real port and the access policy; the
    accept-error log it installed on the loop and the task that keeps the token file."""

    runner: web.AppRunner
    host: str
    port: int
    policy: AccessPolicy
    bridge: McpBridge | None
    accept_errors: AcceptErrorLog
    token_keeper: asyncio.Task[None]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def web_url(self) -> str:
        """The owner's web page (printed by `serve`; no secret: `vault-agent web` signs a browser in)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else "[::1]" if self.host == "::" else None
        return (f"http://{host}:{self.port}" if host else self.url) + "/"

    async def stop(self) -> None:
        self.token_keeper.cancel()
        try:
            await self.runner.cleanup()
        finally:
            self.accept_errors.uninstall(asyncio.get_running_loop())


async def start_server(
    ctx: AppContext, host: str, port: int, *, mcp: bool = True, catalog: Catalog = CATALOG
) -> RunningServer:
    """Bind and start the HTTP server (+ `/mcp`) serving `catalog`; port 0 picks a free port.

    Raises:
        InvalidParameter: non-loopback bind without an explicit token.
        OSError: the address is in use.
    """
    check_bind_allowed(ctx.settings, host)
    token = read_or_create_token(ctx.settings)
    policy = AccessPolicy.from_settings(ctx.settings, token, host)
    bridge = McpBridge(build_mcp_server(ctx, catalog), policy) if mcp else None
    app = build_http_app(ctx, catalog, policy, bridge)
    mount_web_page(app, ctx, policy)  # the owner's page at `/` (vault_agent/web)
    runner = JsonErrorAppRunner(
        app, app[GUARD_KEY], access_log=None, shutdown_timeout=5.0, **handler_args(ctx.settings)
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    loop = asyncio.get_running_loop()
    accept_errors = AcceptErrorLog(loop)
    accept_errors.install(loop)
    try:
        await site.start()
    except BaseException:
        accept_errors.uninstall(loop)
        await runner.cleanup()
        raise
    bound = [addr[1] for addr in runner.addresses if isinstance(addr, tuple)]
    policy.ports.update(bound)
    if bridge is not None:
        bridge.refresh_security()
    keeper = asyncio.create_task(keep_token_file(ctx.settings, token), name="vault-agent-token-keeper")
    return RunningServer(
        runner=runner,
        host=host,
        port=bound[0] if bound else port,
        policy=policy,
        bridge=bridge,
        accept_errors=accept_errors,
        token_keeper=keeper,
    )
