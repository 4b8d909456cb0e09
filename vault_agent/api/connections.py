"""Connection limits of the HTTP server: no flood may take every descriptor or every slot.

Measured before (issue 20): under a 1,024-descriptor limit, 1,100 half-open connections
made every request time out, failed the index build with EMFILE, killed the heartbeat, and
asyncio logged `socket.accept() out of system resource` 327,981 times in 70 s.

- **Header timeout** (aiohttp's own `keepalive_timeout`, set to `header_timeout_seconds`):
  its timer starts when a connection opens (and again after each response) and closes the
  connection if no complete request head has arrived by then, however slowly bytes trickle
  in; idle keep-alive connections close after the same time.
- **Caps** (`ConnectionGuard`, called by the server for each new connection): at most
  `max_unauthenticated_connections` connections that have not yet sent a request with the
  right token; a new one beyond it closes the *oldest* of them (a slowloris flood churns
  its own connections, while a real client, which sends its request at once, gets in). At
  most `max_connections` in all, and never more than the descriptor limit minus
  RESERVED_DESCRIPTORS (kept for the index writer, the parse workers and the engine, so a
  flood cannot fail a build with EMFILE); a connection beyond that is aborted at once
  (no parser, no reply: the cheapest refusal). A connection becomes authenticated when a
  request on it passes the token check (http.py), and is then never evicted.
- **Accept errors**: should descriptors still run out (another part of the process), asyncio
  stops accepting for a second and reports each failed accept to the loop's exception
  handler; `AcceptErrorLog` turns those reports into one warning per LOG_EVERY_S with a
  count, and leaves every other report to the previous handler.
Closed and refused connections are counted in one rate-limited warning too.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from collections import OrderedDict
from typing import Any

from aiohttp.web_protocol import RequestHandler

log = logging.getLogger("vault_agent.http")

RESERVED_DESCRIPTORS = 256  # kept free for the writer, its parse workers and the engine
MIN_CONNECTIONS = 16
LOG_EVERY_S = 10.0
ACCEPT_ERROR_MESSAGE = "socket.accept() out of system resource"


def descriptor_limit() -> int:
    """This process's soft limit on open descriptors (RLIMIT_NOFILE)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def connection_cap(configured: int, limit: int | None = None) -> int:
    """`max_connections`, lowered to leave RESERVED_DESCRIPTORS free under the descriptor limit."""
    limit = descriptor_limit() if limit is None else limit
    return max(MIN_CONNECTIONS, min(configured, limit - RESERVED_DESCRIPTORS))


class RateLimitedWarning:
    """One warning per LOG_EVERY_S for a repeated condition, with how often it happened."""

    def __init__(self, logger: logging.Logger, event: str, every_s: float = LOG_EVERY_S) -> None:
        self._log = logger
        self._event = event
        self._every_s = every_s
        self._last = float("-inf")
        self.pending = 0
        self.total = 0

    def hit(self, message: str) -> None:
        """Count one occurrence; log `message` (with the count since the last line) when due."""
        self.pending += 1
        self.total += 1
        now = time.monotonic()
        if now - self._last < self._every_s:
            return
        self._last = now
        count, self.pending = self.pending, 0
        self._log.warning(message, count, extra={"event": self._event, "count": count})


class ConnectionGuard:
    """Counts connections, closes the oldest unauthenticated one to make room, refuses
    beyond the total cap (see module doc). Runs on the event loop's thread only."""

    def __init__(self, max_connections: int, max_unauthenticated: int) -> None:
        self.max_connections = max_connections
        self.max_unauthenticated = max(1, min(max_unauthenticated, max_connections))
        self._unauthenticated: OrderedDict[RequestHandler, None] = OrderedDict()  # oldest first
        self._authenticated: set[RequestHandler] = set()
        self._warn = RateLimitedWarning(log, "connection_limit")

    @property
    def open(self) -> int:
        return len(self._unauthenticated) + len(self._authenticated)

    def admit(self, handler: RequestHandler, transport: asyncio.Transport) -> bool:
        """A new connection: True when it may stay; False when it was aborted (refused)."""
        if len(self._unauthenticated) >= self.max_unauthenticated or self.open >= self.max_connections:
            self._evict_oldest()
        if self.open >= self.max_connections:
            transport.abort()
            self._warn.hit(
                "connection limit reached; %d connections closed or refused since the last such line"
            )
            return False
        self._unauthenticated[handler] = None
        return True

    def authenticated(self, handler: RequestHandler) -> None:
        """A request on this connection passed the token check: it is never evicted now."""
        if handler in self._unauthenticated:
            del self._unauthenticated[handler]
            self._authenticated.add(handler)

    def lost(self, handler: RequestHandler) -> None:
        self._unauthenticated.pop(handler, None)
        self._authenticated.discard(handler)

    def _evict_oldest(self) -> None:
        if not self._unauthenticated:
            return
        oldest, _ = self._unauthenticated.popitem(last=False)
        oldest.force_close()
        self._warn.hit("connection limit reached; %d connections closed or refused since the last such line")


class AcceptErrorLog:
    """Loop exception handler: asyncio's failed-accept reports become a rate-limited
    warning without traceback; everything else goes to the handler it replaces."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._previous = loop.get_exception_handler()
        self._warn = RateLimitedWarning(log, "accept_failed")

    @property
    def failures(self) -> int:
        return self._warn.total

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == ACCEPT_ERROR_MESSAGE:
            code = getattr(context.get("exception"), "errno", None)
            name = errno.errorcode.get(code, "OSError") if isinstance(code, int) else "OSError"
            self._warn.hit(
                f"cannot accept connections ({name}: out of descriptors or memory); "
                "%d accepts failed, asyncio retries every second"
            )
            return
        if self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.set_exception_handler(self)

    def uninstall(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop.get_exception_handler() is self:
            loop.set_exception_handler(self._previous)
