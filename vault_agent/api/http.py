"""The aiohttp application: one route per operation of the catalog it is given, never hand-written.

Handler = parse (query string or JSON body) → `invoke` in a worker thread (both in
http_invoke.py) → `body_of` → `dump_json`. Envelope operations answer `{"data", "warnings"}`; the versioned raw
contracts answer their object and carry freshness in `X-Index-Freshness` (and
`X-Index-Warnings`, JSON, when there are warnings). Middlewares, outermost first:
request log → error translation → Host → Origin/CORS → bearer token. Bodies are read
under a cap, a time limit and a shared budget (bodies.py); a connection whose request
passed the token check is marked authenticated for the connection caps (connections.py).
`/mcp` is the MCP SDK's Streamable HTTP transport behind the same middlewares.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from aiohttp import web

from vault_agent.api.asgi_bridge import CORS_REQUEST_KEY as CORS_KEY
from vault_agent.api.asgi_bridge import McpBridge
from vault_agent.api.bodies import BODY_LIMITS_KEY, CLIENT_GONE_STATUS, BodyLimits, BodyTimeout
from vault_agent.api.connections import ConnectionGuard, connection_cap
from vault_agent.api.hints import Hints
from vault_agent.api.http_invoke import CTX_KEY, HINTS_KEY, invoke_request
from vault_agent.api.invoke import body_of, dump_json
from vault_agent.api.messages_sse import add_conversation_routes
from vault_agent.api.operation import AppContext, Catalog, Operation
from vault_agent.api.security import VAULT_ID_HEADER, AccessPolicy, bearer_challenge
from vault_agent.contracts import Outcome
from vault_agent.errors import (
    InvalidParameter,
    NotFound,
    ServerUnavailable,
    Unauthorized,
    VaultAgentError,
    internal_error,
)

log = logging.getLogger("vault_agent.http")

POLICY_KEY = web.AppKey("vault_agent_policy", AccessPolicy)
BRIDGE_KEY = web.AppKey("vault_agent_mcp_bridge", McpBridge)
GUARD_KEY = web.AppKey("vault_agent_connection_guard", ConnectionGuard)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class PageRoutes(Protocol):
    """The owner's web page (vault_agent/web), mounted by `server.http_server`: its routes sign in by
    session cookie (with a CSRF token and a same-origin check on changes), which they check
    themselves; the bearer token is never asked there, and the cookie is accepted nowhere
    else, so the API cannot be driven by a cross-site request."""

    def owns(self, request: web.Request) -> bool: ...


PAGE_KEY = web.AppKey("vault_agent_page", PageRoutes)
CORS_EXPOSE = "X-Index-Freshness, X-Index-Warnings, Mcp-Session-Id, WWW-Authenticate"
CORS_ALLOW_HEADERS = "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"


# ----------------------------------------------------------------------------- handlers
def _headers_of(op: Operation, outcome: Outcome[Any]) -> dict[str, str]:
    if op.envelope:
        return {}
    headers: dict[str, str] = {}
    if outcome.freshness is not None:
        headers["X-Index-Freshness"] = outcome.freshness
    if outcome.warnings:
        headers["X-Index-Warnings"] = json.dumps([w.model_dump() for w in outcome.warnings])
    return headers


def make_handler(op: Operation) -> Handler:
    """The one generic handler, bound to an operation."""

    async def handle(request: web.Request) -> web.StreamResponse:
        outcome = await invoke_request(op, request)
        body = body_of(op, outcome)
        return web.Response(
            text=dump_json(body), content_type="application/json", headers=_headers_of(op, outcome)
        )

    handle.__name__ = f"handle_{op.name.replace('-', '_')}"
    return handle


def error_response(exc: VaultAgentError, status: int | None = None) -> web.Response:
    return web.Response(
        text=dump_json(exc.to_body()), status=status or exc.http_status, content_type="application/json"
    )


# ----------------------------------------------------------------------------- middlewares
@web.middleware
async def request_log(request: web.Request, handler: Handler) -> web.StreamResponse:
    """One JSON line per request; never the query string, body or headers."""
    start = time.perf_counter()
    status, size = 500, 0
    try:
        response = await handler(request)
        status = response.status
        size = response.body_length or (response.content_length or 0)
        return response
    except ConnectionError:
        status = CLIENT_GONE_STATUS  # the client left mid-request: this line is all we log
        raise
    finally:
        resource = request.match_info.route.resource
        log.info(
            "request",
            extra={
                "event": "request",
                "route": resource.canonical if resource is not None else "unmatched",
                "method": request.method,
                "status": status,
                "duration_ms": round((time.perf_counter() - start) * 1000, 2),
                "request_bytes": request.content_length or 0,
                "response_bytes": size,
            },
        )


@web.middleware
async def translate_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """VaultAgentError → canonical body; aiohttp's own errors likewise; the rest → INTERNAL."""
    try:
        return await handler(request)
    except BodyTimeout as exc:
        response = error_response(exc, 408)
        response.force_close()
        return response
    except VaultAgentError as exc:
        response = error_response(exc)
        if isinstance(exc, ServerUnavailable):
            response.headers["Retry-After"] = "1"
        if isinstance(exc, Unauthorized):  # RFC 6750: lets MCP clients show our message, not OAuth
            where = request.app[POLICY_KEY].token_place
            response.headers["WWW-Authenticate"] = bearer_challenge(
                request.headers.get("Authorization"), where
            )
        return response
    except web.HTTPException as exc:
        if exc.status == 404:
            return error_response(NotFound("no such route; see docs/http-api.md for the routes"))
        if exc.status == 405:
            return error_response(InvalidParameter("this route does not accept that HTTP method"), 405)
        if exc.status == 413:
            return error_response(InvalidParameter("request body over the 4 MiB limit"), 413)
        if exc.status < 400:
            raise
        return error_response(InvalidParameter("the request is malformed"), exc.status)
    except (asyncio.CancelledError, ConnectionError):
        raise  # a client gone mid-request is no incident (bodies.py); aiohttp drops it quietly
    except Exception:
        return error_response(internal_error(log, "request failed"))


@web.middleware
async def access_checks(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Host, then Origin (with CORS when configured), then the bearer token (the web page's
    routes: their session cookie instead, see `PageRoutes`)."""
    policy = request.app[POLICY_KEY]
    policy.check_host(request.headers.get("Host"))
    origin = request.headers.get("Origin")
    policy.check_origin(origin)
    if (
        origin is not None
        and request.method == "OPTIONS"
        and "Access-Control-Request-Method" in request.headers
    ):
        return web.Response(status=204, headers=_cors_headers(origin, preflight=True))
    page = request.app.get(PAGE_KEY)
    if page is not None and page.owns(request):
        return await handler(request)  # the page's own sign-in (no CORS: the page is same-origin)
    policy.check_vault(
        request.headers.get(VAULT_ID_HEADER)
    )  # before the token: "another vault", not "wrong token"
    if request.path.startswith("/.well-known/"):
        # Not 401: an MCP client that gets 401 here starts an OAuth flow (RFC 9728 discovery)
        # instead of asking its user for the bearer token.
        raise NotFound(
            f"no OAuth here: this server takes a bearer token, 'Authorization: Bearer <token>'; {policy.token_place}"
        )
    policy.check_token(request.headers.get("Authorization"))
    guard = request.app.get(GUARD_KEY)
    if guard is not None and request.protocol is not None:
        guard.authenticated(request.protocol)
    if origin is not None:
        request[CORS_KEY] = _cors_headers(origin, preflight=False)  # streamed /mcp replies add them too
    response = await handler(request)
    if origin is not None and not response.prepared:
        response.headers.update(request[CORS_KEY])
    return response


def _cors_headers(origin: str, *, preflight: bool) -> dict[str, str]:
    headers = {
        "Access-Control-Allow-Origin": origin,
        "Vary": "Origin",
        "Access-Control-Expose-Headers": CORS_EXPOSE,
    }
    if preflight:
        headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS"
        headers["Access-Control-Allow-Headers"] = CORS_ALLOW_HEADERS
        headers["Access-Control-Max-Age"] = "600"
    return headers


# ----------------------------------------------------------------------------- the app
def http_operations(catalog: Catalog) -> list[Operation]:
    """Every operation of `catalog` with an HTTP route (mcp_only aliases have none)."""
    return [op for op in catalog if not op.mcp_only]


def build_http_app(
    ctx: AppContext, catalog: Catalog, policy: AccessPolicy, bridge: McpBridge | None = None
) -> web.Application:
    """The aiohttp application for one vault: a route per operation of `catalog`, `/mcp` when
    a bridge is given."""
    app = web.Application(
        middlewares=[request_log, translate_errors, access_checks],
        client_max_size=4 * 1024 * 1024,
    )
    app[CTX_KEY] = ctx
    app[HINTS_KEY] = Hints(catalog)  # the CLI calls through HTTP: its errors name commands
    app[POLICY_KEY] = policy
    settings = ctx.settings
    app[BODY_LIMITS_KEY] = BodyLimits.from_settings(settings)
    app[GUARD_KEY] = ConnectionGuard(
        connection_cap(settings.max_connections), settings.max_unauthenticated_connections
    )
    for op in http_operations(catalog):
        handler = make_handler(op)
        if op.http_method == "GET" or op.http_both:
            app.router.add_get(op.http_path, handler, allow_head=False)
        if op.http_method == "POST" or op.http_both:
            app.router.add_post(op.http_path, handler)
    add_conversation_routes(app)
    if bridge is not None:
        app[BRIDGE_KEY] = bridge
        app.router.add_route("*", "/mcp", bridge.handle)
        app.cleanup_ctx.append(bridge.lifecycle)
        app.on_shutdown.append(bridge.stop)
    return app
