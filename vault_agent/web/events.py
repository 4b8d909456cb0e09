"""The page's live stream (`GET /ui/events`, server-sent events, session cookie).

One stream per open page carries what the API's `GET /messages/stream` carries (`message`,
`question`, `reply`: the same hub events through `api.messages_sse.hub_events`) plus a
`status` event with the index's freshness and counts, sent when the stream opens and
whenever they change (checked every `STATUS_EVERY_S`, without forcing a stat scan: see
`index_status(recheck=False)`). Note text never passes here; message text does (it is the
agent's message to this person).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web

from vault_agent.api.invoke import to_jsonable
from vault_agent.api.messages_sse import KEEPALIVE_S, event_stream_response, hub_events, sse_frame
from vault_agent.errors import VaultAgentError
from vault_agent.query.status import index_status
from vault_agent.web.page import Page
from vault_agent.web.session import Session

STATUS_EVERY_S = 1.0


def status_event(page: Page) -> dict[str, Any]:
    """The `status` event: freshness, counts, snapshot and warnings (or the error's code)."""
    try:
        outcome = index_status(page.ctx.settings, reader=page.ctx.reader, recheck=False)
    except VaultAgentError as exc:
        return {"type": "status", "error": exc.code, "message": exc.message}
    data = to_jsonable(outcome.data)
    return {"type": "status", **data, "warnings": [w.model_dump() for w in outcome.warnings]}


async def events(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    response = event_stream_response()
    last: dict[str, Any] | None = None
    quiet = 0.0
    async with hub_events(request) as queue:
        try:
            await response.prepare(request)
            await response.write(b": vault-agent page\n\n")
            while True:
                status = await page.call(status_event, page)
                if status != last:
                    await response.write(sse_frame(status))
                    last, quiet = status, 0.0
                try:
                    event = await asyncio.wait_for(queue.get(), STATUS_EVERY_S)
                except TimeoutError:
                    quiet += STATUS_EVERY_S
                    if quiet >= KEEPALIVE_S:  # notices a page that went away
                        await response.write(b": keepalive\n\n")
                        quiet = 0.0
                    continue
                if event is None:  # the server is stopping
                    break
                await response.write(sse_frame(event))
        except (ConnectionResetError, RuntimeError):
            pass  # the page went away
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response
