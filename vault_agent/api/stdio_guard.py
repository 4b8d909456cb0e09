"""Stdio lines the MCP SDK cannot read get a JSON-RPC error reply instead of silence.

The SDK's stdio transport turns a line that is not one JSON-RPC message into an exception
on the read stream, and the server drops it with a debug log: a client that sent a batch
(a JSON array, which MCP removed in 2025-06-18) or a malformed line waits for an answer
forever. HTTP answers such a body 400. `AnsweringReadStream` wraps the read stream: such an
item becomes a JSON-RPC error with a null id (the request's id cannot be known), written
to the same stream as every reply: -32600 for a batch or anything not a message, -32700
for text that is not JSON.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def error_for(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error that answers one unreadable line."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and errors[0].get("type") == "json_invalid":
        code, message = PARSE_ERROR, "parse error: the line is not JSON; send one JSON-RPC message per line"
    elif errors and isinstance(errors[0].get("input"), list):
        code, message = (
            INVALID_REQUEST,
            ("batches are not supported (MCP removed JSON-RPC batching); send one JSON-RPC message per line"),
        )
    else:
        code, message = INVALID_REQUEST, "invalid request: the line is not a JSON-RPC 2.0 message"
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))


class AnsweringReadStream:
    """The SDK's read stream, answering unreadable items itself (see the module docstring)."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)  # the SDK restores the sender's context

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            await self._write.send(SessionMessage(error_for(item)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None
