"""Malformed or over-long requests answered with our JSON error, never echoed or logged.

aiohttp rejects a request it cannot parse (request line over `max_line_size`, a header
over `max_field_size`, bad syntax) before any middleware runs: its `handle_error` logs the
exception — whose text holds the first 100 bytes of the offending line, e.g. a bearer
token or a raw query — and answers with that text in a plain-text body. This request
handler replaces exactly that step: one log line with the status only, and the canonical
JSON error (414 for the request line, 431 for a header, 400 otherwise).

The server class is also where each new connection meets the `ConnectionGuard`
(connections.py), and the runner passes aiohttp's `keepalive_timeout`, which is our
header timeout (`handler_args`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from vault_agent.api.connections import ConnectionGuard
from vault_agent.api.invoke import dump_json
from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter, TooLarge, VaultAgentError

log = logging.getLogger("vault_agent.http")

# Different values on purpose: a LineTooLong names its limit, which tells the two apart.
MAX_REQUEST_LINE_BYTES = 8192
MAX_HEADER_FIELD_BYTES = 8190
HANDLER_ARGS: dict[str, Any] = {
    "max_line_size": MAX_REQUEST_LINE_BYTES,
    "max_field_size": MAX_HEADER_FIELD_BYTES,
}


def handler_args(settings: Settings) -> dict[str, Any]:
    """aiohttp's per-connection settings: line limits, and the header timeout, which is
    aiohttp's `keepalive_timeout` (its timer runs from the connection's start and from each
    response, and closes a connection still waiting for a complete request head)."""
    return {**HANDLER_ARGS, "keepalive_timeout": float(settings.header_timeout_seconds)}


def parse_error(exc: BaseException | None, status: int) -> tuple[int, VaultAgentError]:
    """HTTP status and error for a request aiohttp could not parse (content never quoted)."""
    if isinstance(exc, LineTooLong) and len(exc.args) > 1:
        if exc.args[1] == MAX_REQUEST_LINE_BYTES:
            return 414, TooLarge(f"the request line (URL) is over {MAX_REQUEST_LINE_BYTES} bytes")
        return 431, TooLarge(f"a request header is over {MAX_HEADER_FIELD_BYTES} bytes")
    if status == 500:
        return 400, InvalidParameter("the request is malformed")
    return status, InvalidParameter("the request is malformed (not valid HTTP/1.1)")


class JsonErrorRequestHandler(RequestHandler):
    """aiohttp's connection handler with a quiet, JSON `handle_error`."""

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if request.writer.output_size > 0:
            raise ConnectionError("response already started; cannot send an error")
        status, err = parse_error(exc, status)
        # A client that left mid-request (bodies.ClientGone) already has its one line in the
        # request log; the answer below then goes nowhere.
        if not isinstance(exc, ConnectionError):
            log.warning(
                "request rejected before routing",
                extra={"event": "bad_request", "status": status, "code": err.code},
            )
        resp = web.Response(status=status, text=dump_json(err.to_body()), content_type="application/json")
        resp.force_close()
        return resp


class JsonErrorServer(web.Server):
    """`web.Server` whose connections use `JsonErrorRequestHandler` and pass the guard."""

    guard: ConnectionGuard

    def __call__(self) -> RequestHandler:
        return JsonErrorRequestHandler(self, loop=self._loop, **self._kwargs)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self.guard.admit(handler, transport)  # may abort it, or close the oldest unauthenticated

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self.guard.lost(handler)
        super().connection_lost(handler, exc)


class JsonErrorAppRunner(web.AppRunner):
    """AppRunner serving through `JsonErrorServer` (same settings as aiohttp's own)."""

    def __init__(self, app: web.Application, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.guard = guard

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # Same handler, factory and keyword arguments; only the connection class differs.
        server.__class__ = JsonErrorServer
        assert isinstance(server, JsonErrorServer)
        server.guard = self.guard
        return server
