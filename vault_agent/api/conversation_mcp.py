"""The MCP side of conversations: one hook around every tool call, and the session channel.

`recorded_call` wraps the single place tools are invoked (`_VaultMCPServer.call_tool`): it
binds the session's `McpChannel` (so send_message, end_conversation and the write hook
know whose call it is), times the call and appends one line to the session's
conversation (tool, vault-relative paths, outcome code, duration). The channel reaches the
client from the tool's worker thread through `anyio.from_thread`: a log notification
for each message, elicitation for a question, sampling for a summary. A session is the
SDK connection (stdio process, Streamable HTTP session); on the stateless 2026-07-28
revision a request may name its conversation in `_meta["vault-agent/conversation"]`,
else requests of one client share one conversation within the idle window.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.from_thread
import mcp_types as types
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from vault_agent.api.operation import AppContext
from vault_agent.conversations.hub import bound
from vault_agent.conversations.tools import hub_of, record_call

log = logging.getLogger("vault_agent.conversations")

META_CONVERSATION = "vault-agent/conversation"
_STATE_KEY = "vault_agent.conversation_key"
_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reply": {"type": "string", "title": "Reply"}},
    "required": ["reply"],
}


class McpChannel:
    """One MCP session as the hub sees it (see `conversations.hub.Channel`)."""

    def __init__(self, rc: Any) -> None:
        # `rc` is the low-level server's per-request context (ServerRequestContext).
        self._session = rc.session
        self._request_id = rc.request_id
        params = self._session.client_params
        info = getattr(params, "client_info", None) if params is not None else None
        self.client = str(getattr(info, "name", None) or "unknown")
        self.transport = "mcp-http" if getattr(rc.request, "headers", None) is not None else "stdio"
        self.key = _session_key(rc, self.client)

    def _capabilities(self) -> Any:
        return self._session.client_capabilities

    def notify(self, event: dict[str, Any]) -> bool:
        level: types.LoggingLevel = "warning" if event.get("priority") == "high" else "info"
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(log_level_of(self._session)):
            return False  # the client asked for fewer (logging/setLevel): not sent to it
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=level,
                data=event,
                # A question waiting on the reply channel says how to answer: its own logger,
                # so a client listing messages does not show the text twice.
                logger="vault-agent.questions" if event.get("type") == "question" else "vault-agent.messages",
            )
        )
        try:
            anyio.from_thread.run(self._session.send_notification, note, self._request_id)
        except Exception as exc:  # a gone client must not fail the tool: listeners still got it
            log.warning("message notification not delivered (%s)", type(exc).__name__)
            return False
        return True

    def ask(self, text: str, timeout_s: float) -> tuple[str | None, str | None]:
        caps = self._capabilities()
        if caps is None or caps.elicitation is None or not self._session.can_send_request:
            return None, "unsupported"

        async def elicit() -> types.ElicitResult:
            with anyio.fail_after(timeout_s):
                return await self._session.elicit_form(text, _REPLY_SCHEMA, self._request_id)  # type: ignore[no-any-return]

        try:
            result = anyio.from_thread.run(elicit)
        except TimeoutError:
            return None, "timeout"
        except Exception as exc:
            log.warning("elicitation failed (%s)", type(exc).__name__)
            return None, "unsupported"
        reply = (result.content or {}).get("reply") if result.action == "accept" else None
        return (str(reply), None) if reply is not None else (None, "declined")

    def sample(self, prompt: str, timeout_s: float) -> str | None:
        caps = self._capabilities()
        if caps is None or caps.sampling is None or not self._session.can_send_request:
            return None
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
                ],
                max_tokens=400,
            )
        )

        async def ask_model() -> types.CreateMessageResult:
            return await self._session.send_request(  # type: ignore[no-any-return]
                request,
                types.CreateMessageResult,
                request_read_timeout_seconds=timeout_s,
                metadata=ServerMessageMetadata(related_request_id=self._request_id),
            )

        try:
            result = anyio.from_thread.run(ask_model)
        except Exception as exc:
            log.warning("sampling failed (%s)", type(exc).__name__)
            return None
        content = result.content
        return content.text if isinstance(content, types.TextContent) else None


# Messages are MCP log notifications, so the server declares `logging` and honours the level a
# client sets with `logging/setLevel` (kept in the session's connection state, like the key below).
LOG_LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)  # fmt: skip
_LEVEL_KEY = "vault_agent.log_level"


def _connection_state(session: Any) -> dict[str, Any] | None:
    state = getattr(getattr(session, "_connection", None), "state", None)
    return state if isinstance(state, dict) else None


def set_log_level(session: Any, level: types.LoggingLevel) -> None:
    """Remember the least severe level this session wants notifications of."""
    state = _connection_state(session)
    if state is not None:
        state[_LEVEL_KEY] = level


def log_level_of(session: Any) -> types.LoggingLevel:
    state = _connection_state(session)
    level = state.get(_LEVEL_KEY) if state is not None else None
    return level if level in LOG_LEVELS else "debug"


def _session_key(rc: Any, client: str) -> str:
    """The conversation key of this request's session (see the module docstring)."""
    meta = rc.meta
    named = meta.get(META_CONVERSATION) if isinstance(meta, dict) else getattr(meta, META_CONVERSATION, None)
    if isinstance(named, str) and named:
        return f"named:{named[:100]}"
    # The SDK keeps one Connection per session with a `state` dict for servers' own use;
    # ServerSession is a per-request proxy, so the key is stored on the connection.
    connection = getattr(rc.session, "_connection", None)
    state = getattr(connection, "state", None)
    if rc.protocol_version in MODERN_PROTOCOL_VERSIONS or not isinstance(state, dict):
        return f"stateless:{client}"
    if _STATE_KEY not in state:
        state[_STATE_KEY] = uuid.uuid4().hex
    return str(state[_STATE_KEY])


def _outcome_of(result: Any) -> str:
    if not getattr(result, "is_error", False):
        return "OK"
    error = (getattr(result, "structured_content", None) or {}).get("error")
    return str(error.get("code", "INTERNAL")) if isinstance(error, dict) else "INTERNAL"


async def recorded_call(
    ctx: AppContext,
    name: str,
    arguments: dict[str, Any],
    context: Any,
    call: Callable[[], Awaitable[Any]],
) -> Any:
    """Run one tool call as part of its session's conversation and record it."""
    try:
        channel = McpChannel(context)
    except (ValueError, AttributeError):
        return await call()  # no request context (a direct in-process call): nothing to record
    hub_of(ctx)  # built before the call: it installs the write hook the call's writes report to
    start = time.perf_counter()
    result: Any = None
    try:
        with bound(channel):
            result = await call()
        return result
    finally:
        ms = (time.perf_counter() - start) * 1000
        outcome = _outcome_of(result) if result is not None else "INTERNAL"
        try:
            await anyio.to_thread.run_sync(
                record_call, ctx, channel, name, dict(arguments or {}), outcome, ms
            )
        except Exception as exc:  # recording must never fail the call it records
            log.warning("tool call not recorded (%s)", type(exc).__name__)
