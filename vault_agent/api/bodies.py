"""Request bodies: capped, timed, budgeted, and a client that leaves mid-upload is no incident.

- Cap: at most MAX_BODY_BYTES (4 MiB), declared or actual, else 413 TOO_LARGE.
- Time: the whole body must arrive within `body_timeout_seconds` of the handler asking for
  it, else 408 and the connection closes (a client trickling a body holds no slot forever).
- Budget: a body holds its size (the declared length, the cap when none is declared) from a
  shared budget of `max_body_buffer_mb` while it is received *and* processed, since what a
  body costs is its parsed form too (JSON objects, the MCP SDK's copies): 60 concurrent
  4 MiB `/mcp` bodies took the server from 277 to 986 MB before. A body that does not fit
  waits (aiohttp stops reading its socket meanwhile, so the bytes stay in the kernel), at
  most QUEUE_WAIT_S (or the body timeout if shorter), then is answered 503
  SERVER_UNAVAILABLE with `Retry-After`; waiting is reported by one rate-limited warning.
- A client that disconnects mid-body raises `ClientGone` (a ConnectionResetError, which
  aiohttp drops quietly); the request log writes its one line with status 499, and nothing
  is logged as an INTERNAL incident. (aiohttp's `handler_cancellation` stays off: it would
  cancel a handler mid-way through a write tool; the body read failing is enough.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from vault_agent.api.connections import RateLimitedWarning
from vault_agent.api.security import MAX_BODY_BYTES
from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter, ServerUnavailable, TooLarge

READ_CHUNK = 65536
QUEUE_WAIT_S = 10.0  # how long a body waits for room in the budget before 503
log = logging.getLogger("vault_agent.http")

CLIENT_GONE_STATUS = 499  # nginx's "client closed request": only ever in our request log


class ClientGone(ConnectionResetError):
    """The client closed the connection before its request body arrived."""


class BodyTimeout(InvalidParameter):
    """The body did not arrive in time (answered 408, then the connection closes)."""


class BodyBudget:
    """Bytes of request bodies held at once, across all requests (see module doc)."""

    def __init__(self, limit_bytes: int, wait_s: float) -> None:
        self.limit = max(limit_bytes, MAX_BODY_BYTES)  # one maximal body always fits
        self.wait_s = wait_s
        self.free = self.limit
        self.waiting = 0
        self._cond = asyncio.Condition()
        self._warn = RateLimitedWarning(log, "body_queued")

    @asynccontextmanager
    async def hold(self, nbytes: int) -> AsyncIterator[None]:
        """Hold `nbytes` of the budget for the block; wait for room at most `wait_s`.

        Raises:
            ServerUnavailable: no room within `wait_s`.
        """
        nbytes = min(max(nbytes, 0), self.limit)
        async with self._cond:
            if self.free < nbytes:
                self._warn.hit(
                    "request bodies wait for room in the body budget (%d since the last such line)"
                )
                self.waiting += 1
                try:
                    await asyncio.wait_for(self._cond.wait_for(lambda: self.free >= nbytes), self.wait_s)
                except TimeoutError:
                    raise ServerUnavailable(
                        "the server is receiving too many large requests at once; retry in a moment"
                    ) from None
                finally:
                    self.waiting -= 1
            self.free -= nbytes
        try:
            yield
        finally:
            async with self._cond:
                self.free += nbytes
                self._cond.notify_all()


@dataclass(frozen=True)
class BodyLimits:
    """The body rules of one server: the cap, the time allowed, the shared budget."""

    timeout_s: float
    budget: BodyBudget

    @classmethod
    def from_settings(cls, settings: Settings) -> BodyLimits:
        timeout_s = float(settings.body_timeout_seconds)
        budget = BodyBudget(settings.max_body_buffer_mb * 1024 * 1024, min(QUEUE_WAIT_S, timeout_s))
        return cls(timeout_s, budget)


BODY_LIMITS_KEY = web.AppKey("vault_agent_body_limits", BodyLimits)


@asynccontextmanager
async def request_body(request: web.Request) -> AsyncIterator[bytes]:
    """The request body, read under the app's cap, time limit and budget; the budget is
    held until the block ends (the caller parses and processes the body inside it).

    Raises:
        TooLarge: over 4 MiB. BodyTimeout: not arrived in time. ServerUnavailable: no room
        in the budget in time. ClientGone: the client went away mid-body.
    """
    limits = request.app[BODY_LIMITS_KEY]
    # No body (an SSE GET) holds nothing; a chunked one, of unknown length, holds the cap.
    declared = request.content_length if request.can_read_body else 0
    if declared is not None and declared > MAX_BODY_BYTES:
        raise _too_large()
    async with limits.budget.hold(MAX_BODY_BYTES if declared is None else declared):
        try:
            async with asyncio.timeout(limits.timeout_s):
                body = await _read_capped(request)
        except TimeoutError:
            raise BodyTimeout(
                f"the request body did not arrive within {limits.timeout_s:g} s; send it at once"
            ) from None
        yield body


async def _read_capped(request: web.Request) -> bytes:
    buf = bytearray()
    while True:
        try:
            chunk = await request.content.read(READ_CHUNK)
        except (ConnectionError, HttpProcessingError, web.RequestPayloadError) as exc:
            transport = request.transport
            if isinstance(exc, ConnectionError) or transport is None or transport.is_closing():
                raise ClientGone() from None
            raise InvalidParameter(
                "the request body is malformed (its length or chunking is wrong)"
            ) from None
        if not chunk:
            return bytes(buf)
        if len(buf) + len(chunk) > MAX_BODY_BYTES:
            raise _too_large()
        buf += chunk


def _too_large() -> TooLarge:
    return TooLarge(f"request body over the {MAX_BODY_BYTES // (1024 * 1024)} MiB limit; send less data")
