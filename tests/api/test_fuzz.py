"""Fuzzed HTTP and MCP calls never answer 500 / INTERNAL (RELIABILITY: bad input).

Every operation of the catalog is called over the real aiohttp server and the real MCP SDK
client with parameters drawn by hypothesis: right and wrong names (snake and camel
case), wrong types, huge and hostile strings, nested JSON, raw non-JSON bodies. Any
answer is fine except a 500 or an `INTERNAL` code. A short run is part of CI; the
2,000-call trial runs under `-m slow`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.serverkit import ServerThread, http_mcp_client
from vault_agent.api.http import http_operations
from vault_agent.api.operation import Operation
from vault_agent.api.ops import CATALOG

OPS: list[Operation] = http_operations(CATALOG) if CATALOG else []  # mcp_only aliases: MCP side
HOSTILE = st.sampled_from(
    [
        "",
        "..",
        "../../etc/passwd",
        "/etc/passwd",
        "a\x00b",
        "~",
        "C:\\x",
        "%2e%2e/",
        "💥" * 50,
        "x" * 5000,
        "projects/alpha/plan.md",
        "#",
        "[[",
        "-1",
        "NaN",
        "1e309",
        "\ud800",
    ]
)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    HOSTILE,
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


@st.composite
def call_args(draw: st.DrawFn, ops: list[Operation] | None = None) -> tuple[Operation, dict[str, Any]]:
    op = draw(st.sampled_from(ops or OPS))
    names = list(op.params.model_fields)
    keys = (
        draw(
            st.lists(st.sampled_from(names + [_camel(n) for n in names] + ["bogus"]), max_size=5, unique=True)
        )
        if names
        else []
    )
    return op, {k: draw(VALUE) for k in keys}


def _http_call(
    server: ServerThread, op: Operation, args: dict[str, Any], raw_body: bytes | None
) -> tuple[int, str]:
    if op.http_method == "GET":
        flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in args.items()}
        query = urllib.parse.urlencode({k: v.encode("utf-8", "surrogatepass") for k, v in flat.items()})
        status, _, text = server.request("GET", op.http_path + ("?" + query if query else ""))
    else:
        body = raw_body if raw_body is not None else json.dumps(args).encode("utf-8", "surrogatepass")
        status, _, text = server.request("POST", op.http_path, body=body)
    return status, text


def _check(status: int, text: str) -> None:
    assert status != 500 and '"INTERNAL"' not in text, (status, text[:300])


def _http_trial(server: ServerThread, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(call=call_args(), raw=st.one_of(st.none(), st.binary(max_size=64)))
    def run(call: tuple[Operation, dict[str, Any]], raw: bytes | None) -> None:
        _check(*_http_call(server, call[0], call[1], raw))

    run()


class McpSession:
    """One real MCP client session, owned by one task on its own loop (anyio needs the
    session entered and left in the same task); sync code submits calls to it."""

    def __init__(self, server: ServerThread) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.ready: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        self.done = asyncio.run_coroutine_threadsafe(self._serve(server), self.loop)
        self.tools = self.ready.result(120)

    async def _serve(self, server: ServerThread) -> None:
        try:
            async with http_mcp_client(server.url, server.token) as client:
                self.ready.set_result([t.name for t in (await client.list_tools()).tools])
                while (item := await self.queue.get()) is not None:
                    name, args, fut = item
                    try:
                        result = await client.call_tool(name, args)
                        fut.set_result(json.dumps(result.model_dump(mode="json"), default=str))
                    except Exception as exc:  # reported to the calling test
                        fut.set_exception(exc)
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def call(self, name: str, args: dict[str, Any]) -> str:
        fut: concurrent.futures.Future[str] = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (name, args, fut))
        return fut.result(120)

    def close(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, None)
            self.done.result(60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(30)
            self.loop.close()


@pytest.fixture
def mcp(server: ServerThread) -> Iterator[McpSession]:
    session = McpSession(server)
    yield session
    session.close()


def _no_surrogates(value: Any) -> Any:
    """The SDK client cannot encode lone surrogates (UTF-8); the HTTP side sends them raw."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # not JSON; the HTTP side sends these as query text
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    return value


def _mcp_trial(mcp: McpSession, examples: int) -> None:
    listed = [op for op in CATALOG if op.mcp_name in mcp.tools]

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(call=call_args(listed))
    def run(call: tuple[Operation, dict[str, Any]]) -> None:
        op, args = call
        text = mcp.call(op.mcp_name, _no_surrogates(args))
        assert '"INTERNAL"' not in text and "internal error" not in text, text[:300]

    run()


def test_fuzzed_http_calls_never_answer_internal(server: ServerThread) -> None:
    _http_trial(server, 80)


def test_fuzzed_mcp_calls_never_answer_internal(mcp: McpSession) -> None:
    _mcp_trial(mcp, 40)


@pytest.mark.slow
def test_fuzz_trial_2000_calls(server: ServerThread, mcp: McpSession) -> None:
    _http_trial(server, 1200)
    _mcp_trial(mcp, 800)
