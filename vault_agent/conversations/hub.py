"""The open conversations of one process: boundaries, idle timeout, live listeners.

A conversation belongs to one agent session (its `Channel.key`); it starts with the
session's first recorded tool call and ends on `end_conversation`, after
`conversations.idle_minutes` without a call, or when the user ends it from the CLI (the
hub notices the record grew under it and starts a new one). Two sessions never share a
conversation. The clock is injectable so tests drive the idle timeout without sleeping.
Tool calls run in worker threads; `CURRENT` (a context variable the transport sets around
one call) tells the write hook and the core tools which session a call belongs to.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from vault_agent.config import Settings
from vault_agent.conversations.digest import digest, end_line
from vault_agent.conversations.liveness import SERVER_STOPPED, OwnerLock
from vault_agent.conversations.store import ConversationStore, Line
from vault_agent.errors import NotFound
from vault_agent.files.models import WriteObserver

log = logging.getLogger("vault_agent.conversations")

# Questions of plain HTTP callers wait in the server's request threads (a handful): a few
# must not leave none for other requests. MCP calls wait in the SDK's own worker threads.
MAX_HTTP_WAITS = 2


class ConvContext(Protocol):
    """What the conversation cores need from `api.operation.AppContext` (structural, no import):
    the hub once built, the clock to build it with, and the write hook it installs
    (files.pipeline calls it after each write)."""

    settings: Settings
    hub: ConversationHub | None
    conversation_clock: Callable[[], float] | None
    write_observer: WriteObserver | None


class Channel(Protocol):
    """How the hub reaches the client of one session (implemented by the transports)."""

    key: str  # the session: one conversation per key at a time
    client: str  # client name, as the client reported it
    transport: str  # stdio | http | mcp-http

    def notify(self, event: dict[str, Any]) -> bool:
        """Deliver a message to this session's client now; False when it cannot."""
        ...

    def ask(self, text: str, timeout_s: float) -> tuple[str | None, str | None]:
        """Ask the user in the client; (reply, None) or (None, 'unsupported' | 'declined' |
        'timeout'). 'unsupported' (no form in this client) sends the question to the reply
        channel instead (`replies.wait_for_reply`)."""
        ...

    def sample(self, prompt: str, timeout_s: float) -> str | None:
        """The client's model's answer to `prompt`, or None when it cannot or will not."""
        ...


class DetachedChannel:
    """Calls from HTTP or the CLI: one shared 'http' conversation, no back channel."""

    key = "http"
    client = "http"
    transport = "http"

    def notify(self, event: dict[str, Any]) -> bool:
        return False

    def ask(self, text: str, timeout_s: float) -> tuple[str | None, str | None]:
        return None, "unsupported"

    def sample(self, prompt: str, timeout_s: float) -> str | None:
        return None


CURRENT: ContextVar[Channel | None] = ContextVar("vault_agent_conversation_channel", default=None)


@contextlib.contextmanager
def bound(channel: Channel) -> Iterator[None]:
    """Run the body as a call of `channel`'s session."""
    token = CURRENT.set(channel)
    try:
        yield
    finally:
        CURRENT.reset(token)


@dataclass
class _Open:
    cid: str
    last: float
    size: int  # the record's size after our last append
    messages: int


class ConversationHub:
    """Owner of this process's open conversations and of the message listeners."""

    def __init__(
        self,
        store: ConversationStore,
        *,
        idle_s: float,
        retention: int,
        reply_timeout_s: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.idle_s = idle_s
        self.retention = retention
        self.reply_timeout_s = reply_timeout_s
        self.clock = clock
        self._open: dict[str, _Open] = {}
        self._lock = threading.RLock()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self.owner = OwnerLock(store.dir)  # marks our open conversations as live (liveness.py)
        self._waiting: dict[
            tuple[str, int], tuple[threading.Event, str]
        ] = {}  # question → (event, transport)

    # ----- boundaries ------------------------------------------------------------------
    def conversation_of(self, channel: Channel) -> str:
        """The open conversation of `channel`'s session, started (or restarted) as needed."""
        with self._lock:
            now = self.clock()
            cur = self._open.get(channel.key)
            if cur is not None and now - cur.last > self.idle_s:
                self._close(cur, "idle", *self._digest_of(cur.cid), "digest", at=cur.last + self.idle_s)
                cur = None
            if cur is not None and self.store.size(cur.cid) != cur.size:
                cur = self._resync(channel.key, cur)
            if cur is None:
                cur = self._start(channel, now)
            cur.last = now
            return cur.cid

    def _start(self, channel: Channel, now: float) -> _Open:
        cid = self.store.new_id(now)
        line: Line = {"t": "start", "at": now, "client": channel.client[:100], "transport": channel.transport}
        cur = _Open(cid, now, self.store.append(cid, [line]), 0)
        self.owner.mark_open(cid)
        self._open[channel.key] = cur
        self.store.prune(self.retention)
        log.info("conversation started transport=%s", channel.transport)
        return cur

    def _resync(self, key: str, cur: _Open) -> _Open | None:
        """Someone else appended (the user's `conversations end`, or retention deleted it)."""
        try:
            lines = self.store.read(cur.cid)
        except NotFound:
            lines = []
        if not lines or end_line(lines) is not None:
            self._open.pop(key, None)
            self.owner.unmark(cur.cid)
            return None
        cur.size = self.store.size(cur.cid)
        return cur

    def _digest_of(self, cid: str) -> tuple[str, str]:
        try:
            return digest(self.store.read(cid))
        except NotFound:
            return "", ""

    def _close(self, cur: _Open, reason: str, title: str, summary: str, source: str, at: float) -> None:
        line: Line = {
            "t": "end",
            "at": at,
            "reason": reason,
            "title": title,
            "summary": summary,
            "summary_source": source,
        }
        self.store.append(cur.cid, [line])
        self.owner.unmark(cur.cid)
        for key, value in list(self._open.items()):
            if value is cur:
                del self._open[key]

    def close_all(self) -> None:
        """End every open conversation of this process (the server is stopping)."""
        with self._lock:
            for cur in list(self._open.values()):
                try:
                    lines = self.store.read(cur.cid)
                except NotFound:
                    continue
                if end_line(lines) is None:
                    self._close(cur, SERVER_STOPPED, *digest(lines), "digest", at=self.clock())
            self._open.clear()
            self.owner.release()

    def append(self, channel: Channel, lines: list[Line]) -> str:
        """Append lines to the session's conversation; returns its id."""
        with self._lock:
            cid = self.conversation_of(channel)
            cur = self._open[channel.key]
            cur.size = self.store.append(cid, lines)
            return cid

    def next_message_seq(self, channel: Channel) -> tuple[str, int]:
        with self._lock:
            cid = self.conversation_of(channel)
            cur = self._open[channel.key]
            cur.messages += 1
            return cid, cur.messages

    def end(self, channel: Channel, title: str, summary: str, source: str) -> str:
        """Close the session's conversation with this title and summary; returns its id."""
        with self._lock:
            cid = self.conversation_of(channel)
            self._close(self._open[channel.key], "agent", title, summary, source, at=self.clock())
            return cid

    # ----- listeners -------------------------------------------------------------------
    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Add a live listener of messages (thread-safe); returns its unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def publish(self, event: dict[str, Any]) -> int:
        """Give one message to every listener; returns how many took it."""
        with self._lock:
            listeners = list(self._listeners)
        delivered = 0
        for listener in listeners:
            try:
                listener(event)
                delivered += 1
            except Exception as exc:  # a listener that went away must not fail the sender
                log.warning("message listener failed (%s)", type(exc).__name__)
        return delivered

    # ----- questions waiting for a reply -------------------------------------------------
    def expect_reply(self, cid: str, seq: int, transport: str) -> threading.Event | None:
        """An event set when a reply to question `seq` of `cid` arrives in this process;
        None when MAX_HTTP_WAITS questions of plain HTTP callers already wait."""
        with self._lock:
            if transport == "http" and sum(t == "http" for _e, t in self._waiting.values()) >= MAX_HTTP_WAITS:
                return None
            event = threading.Event()
            self._waiting[(cid, seq)] = (event, transport)
            return event

    def stop_expecting(self, cid: str, seq: int) -> None:
        with self._lock:
            self._waiting.pop((cid, seq), None)

    def reply_arrived(self, cid: str, seq: int) -> None:
        """Wake the send_message waiting on that question at once (other processes poll)."""
        with self._lock:
            waiting = self._waiting.get((cid, seq))
        if waiting is not None:
            waiting[0].set()
