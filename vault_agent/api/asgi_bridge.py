"""Serve the MCP SDK's Streamable HTTP transport (ASGI) from an aiohttp route at `/mcp`.

aiohttp is not ASGI, and a naive ASGI mount hangs on `initialize` because nothing runs
the SDK's `StreamableHTTPSessionManager.run()`, whose task group hosts every session. So:

- `McpBridge.lifecycle` (an aiohttp `cleanup_ctx`) starts `run()` in its own task for the
  app's lifetime; `on_shutdown` stops it first, which ends open SSE streams, so a stop
  does not wait on idle GET streams.
- `McpBridge.handle` turns one aiohttp request into an ASGI HTTP scope, feeds the body
  (read under the cap, time limit and shared budget of bodies.py, held until the response
  ends) through `receive`, and streams the `send` messages into a
  `web.StreamResponse`. After the body, `receive` blocks until the response is complete or
  the client goes away, then reports `http.disconnect` (the SSE responses watch for it).
Our Host/Origin/token middlewares run before this handler; the SDK's own
`TransportSecuritySettings` get the same host and origin lists as a second fence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

from aiohttp import web
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from vault_agent.api.bodies import request_body
from vault_agent.api.security import MAX_BODY_BYTES, AccessPolicy

log = logging.getLogger("vault_agent.mcp_http")

CORS_REQUEST_KEY = web.RequestKey("vault_agent_cors_headers", dict[str, str])  # set for an allowed Origin
DISCONNECT_POLL_S = 1.0  # how often a waiting `receive` looks for a closed client socket


class McpBridge:
    """One MCP server exposed over Streamable HTTP inside an aiohttp application."""

    def __init__(self, server: Server[Any], policy: AccessPolicy) -> None:
        self.policy = policy
        self.security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=[], allowed_origins=[]
        )
        # streamable_http_app() builds the session manager with our security settings; we
        # use the manager directly and never the Starlette router around it.
        server.streamable_http_app(
            transport_security=self.security,
            max_request_body_size=MAX_BODY_BYTES,
            host=policy.bind_host,
        )
        self.manager: StreamableHTTPSessionManager = server.session_manager
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def refresh_security(self) -> None:
        """Copy the policy's hosts (now with the bound port) into the SDK settings."""
        hosts, origins = self.policy.mcp_security_lists()
        self.security.allowed_hosts = hosts
        self.security.allowed_origins = origins

    # ----- lifecycle ---------------------------------------------------------------------
    async def lifecycle(self, app: web.Application) -> AsyncIterator[None]:
        """aiohttp cleanup_ctx: keep the session manager's task group alive meanwhile."""
        started = asyncio.Event()

        async def run() -> None:
            async with self.manager.run():
                started.set()
                await self._stop.wait()

        self._task = asyncio.create_task(run(), name="mcp-session-manager")
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done():
            self._task.result()  # re-raise a start-up failure
        yield
        await self.stop(app)

    async def stop(self, _app: web.Application) -> None:
        """Stop the session manager (idempotent); registered as on_shutdown too."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # ----- one request -------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Run the SDK's ASGI handler for one aiohttp request.

        Raises:
            TooLarge: the body is over 4 MiB; see `bodies.request_body` for the others.
        """
        async with request_body(request) as body:
            return await self._handle(request, body)

    async def _handle(self, request: web.Request, body: bytes) -> web.StreamResponse:
        self.refresh_security()
        done = asyncio.Event()
        state: dict[str, Any] = {"response": None, "body_sent": False, "gone": False}

        async def receive() -> dict[str, Any]:
            if not state["body_sent"]:
                state["body_sent"] = True
                return {"type": "http.request", "body": body, "more_body": False}
            while not done.is_set():
                transport = request.transport
                if transport is None or transport.is_closing():
                    break
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(done.wait(), DISCONNECT_POLL_S)
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                response = web.StreamResponse(status=int(message["status"]))
                for key, value in message.get("headers", []):
                    response.headers.add(key.decode("latin-1"), value.decode("latin-1"))
                response.headers.update(request.get(CORS_REQUEST_KEY, {}))
                await response.prepare(request)
                state["response"] = response
            elif kind == "http.response.body":
                response = state["response"]
                if response is None:
                    raise RuntimeError("ASGI body before response start")
                if state["gone"]:
                    return  # the client left (it often closes right after the last SSE event)
                try:
                    chunk = message.get("body", b"")
                    if chunk:
                        await response.write(chunk)
                    if not message.get("more_body", False):
                        await response.write_eof()
                        done.set()
                except (ConnectionResetError, RuntimeError):
                    state["gone"] = True
                    done.set()

        try:
            await self.manager.handle_request(self._scope(request), receive, send)
        finally:
            done.set()
        started: web.StreamResponse | None = state["response"]
        if started is None:
            return web.Response(status=500)
        return started

    @staticmethod
    def _scope(request: web.Request) -> dict[str, Any]:
        path, _, _query = request.raw_path.partition("?")
        peer = request.transport.get_extra_info("peername") if request.transport else None
        sock = request.transport.get_extra_info("sockname") if request.transport else None
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": f"{request.version.major}.{request.version.minor}",
            "method": request.method,
            "scheme": request.scheme,
            "path": request.path,
            "raw_path": path.encode("latin-1", "replace"),
            "query_string": request.query_string.encode("latin-1", "replace"),
            "root_path": "",
            # Host lower-cased: our middleware already matched it case-insensitively (DNS
            # names are), the SDK compares exact strings.
            "headers": [
                (k.lower(), v.lower() if k.lower() == b"host" else v) for k, v in request.raw_headers
            ],
            "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
            "server": tuple(sock[:2]) if isinstance(sock, tuple) else None,
            "state": {},
        }
