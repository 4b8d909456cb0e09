"""HTTP routes of conversations beyond the generated ones: the live message stream
(`GET /messages/stream`, server-sent events, token required like every route) and the
conversation operations (`api/ops/conversations.py`) with the id in the path: `GET /conversations/{id}`,
`GET /conversations/{id}/questions`, `POST /conversations/{id}/reply`,
`POST /conversations/{id}/undo`.

Messages come from the hub's listeners, which tool calls run in worker threads: each
stream owns an asyncio queue fed through `call_soon_threadsafe`. A comment line every
`KEEPALIVE_S` notices a client that left; server shutdown ends every stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aiohttp import web

from vault_agent.api.http_invoke import CTX_KEY, invoke_request
from vault_agent.api.invoke import body_of, dump_json
from vault_agent.api.operation import Operation
from vault_agent.api.ops import conversations
from vault_agent.conversations.tools import hub_of

KEEPALIVE_S = 15.0
QUEUE_MAX = 1000  # a stream that falls this far behind drops messages rather than grow
STREAMS_KEY = web.AppKey("vault_agent_message_streams", set[Callable[[dict[str, Any] | None], None]])


def sse_frame(event: dict[str, Any]) -> bytes:
    """One server-sent event: `event: <type>` and the JSON on one `data:` line."""
    return (
        f"event: {event.get('type', 'message')}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
    )


@contextlib.asynccontextmanager
async def hub_events(request: web.Request) -> AsyncIterator[asyncio.Queue[dict[str, Any] | None]]:
    """A queue of every hub event (message, question, reply) from now on; None once the
    server shuts down. Shared by `/messages/stream` and the web page's stream."""
    hub = hub_of(request.app[CTX_KEY])
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(QUEUE_MAX)

    def put(event: dict[str, Any] | None) -> None:
        if not queue.full():
            queue.put_nowait(event)

    def listener(event: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(put, event)  # called from the tool's worker thread

    unsubscribe = hub.subscribe(listener)
    streams = request.app[STREAMS_KEY]
    streams.add(put)
    try:
        yield queue
    finally:
        unsubscribe()
        streams.discard(put)


def event_stream_response() -> web.StreamResponse:
    return web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


async def stream_messages(request: web.Request) -> web.StreamResponse:
    """Deliver every message sent from now on, until the client or the server goes away."""
    response = event_stream_response()
    async with hub_events(request) as queue:
        try:
            await response.prepare(request)
            await response.write(b": vault-agent messages\n\n")
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                if event is None:
                    break
                await response.write(sse_frame(event))
        except (ConnectionResetError, RuntimeError):
            pass  # the client left
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


def by_id(op: Operation) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A route with the conversation id in its path, answering like the operation `op` with
    that id (query string for GET, JSON body for POST)."""

    async def handle(request: web.Request) -> web.Response:
        outcome = await invoke_request(op, request, {"id": request.match_info["id"]})
        return web.Response(text=dump_json(body_of(op, outcome)), content_type="application/json")

    handle.__name__ = f"handle_{op.name.replace('-', '_')}_by_id"
    return handle


async def _end_streams(app: web.Application) -> None:
    streams = app[STREAMS_KEY]
    for put in list(streams):
        put(None)


def add_conversation_routes(app: web.Application) -> None:
    """Mount the message stream and the by-id conversation route on the app."""
    app[STREAMS_KEY] = set()
    app.router.add_get("/messages/stream", stream_messages, allow_head=False)
    app.router.add_get("/conversations/{id}", by_id(conversations.GET_CONVERSATION), allow_head=False)
    app.router.add_get("/conversations/{id}/questions", by_id(conversations.QUESTIONS), allow_head=False)
    app.router.add_post("/conversations/{id}/reply", by_id(conversations.REPLY))
    app.router.add_post("/conversations/{id}/undo", by_id(conversations.UNDO))
    app.on_shutdown.append(_end_streams)
