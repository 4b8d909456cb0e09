"""Request bodies (issue 20, item 4): a shared budget queues or refuses bodies beyond it, a
trickled body times out, and a client that leaves mid-upload is one quiet log line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from testkit import wait_until

from api.processkit import read_response
from api.serverkit import LogCapture, ServerThread, build_fixture_vault, serving
from vault_agent.api.bodies import BODY_LIMITS_KEY, BodyBudget
from vault_agent.api.security import MAX_BODY_BYTES
from vault_agent.config import Settings
from vault_agent.errors import ServerUnavailable

MCP_HEADERS = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"


def test_budget_queues_a_body_until_room_is_freed_and_refuses_after_the_wait() -> None:
    async def trial() -> list[str]:
        budget = BodyBudget(MAX_BODY_BYTES, wait_s=30)
        order: list[str] = []
        first_in = asyncio.Event()
        release_first = asyncio.Event()

        async def first() -> None:
            async with budget.hold(MAX_BODY_BYTES):
                order.append("first holds")
                first_in.set()
                await release_first.wait()
            order.append("first released")

        async def second() -> None:
            await first_in.wait()
            async with budget.hold(1):
                order.append("second holds")

        tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
        while budget.waiting == 0:  # the second waits for room (no sleeps: yield until it does)
            await asyncio.sleep(0)
        order.append("second waits")
        release_first.set()
        await asyncio.gather(*tasks)

        refusing = BodyBudget(MAX_BODY_BYTES, wait_s=0.05)
        async with refusing.hold(MAX_BODY_BYTES):
            with pytest.raises(ServerUnavailable) as caught:
                async with refusing.hold(1):
                    pass
        order.append(caught.value.code)
        return order

    assert asyncio.run(trial()) == [
        "first holds",
        "second waits",
        "first released",
        "second holds",
        "SERVER_UNAVAILABLE",
    ]


@pytest.fixture
def tight_server(tmp_path: Path) -> Iterator[tuple[ServerThread, LogCapture]]:
    """A server whose body budget is one 4 MiB body, with a body timeout long enough that a
    stalled body holds the budget for the whole trial."""
    settings = dataclasses.replace(
        build_fixture_vault(tmp_path), max_body_buffer_mb=4, body_timeout_seconds=60
    )
    yield from _serve_with_logs(settings)


def _serve_with_logs(settings: Settings) -> Generator[tuple[ServerThread, LogCapture], None, None]:
    import gc
    import logging

    # Earlier tests' stopped servers can leave handler tasks for the garbage collector, which
    # logs them ("Task was destroyed") whenever it runs: collect them before capturing this
    # server's lines.
    gc.collect()
    capture = LogCapture(settings)
    root = logging.getLogger()
    old = root.level
    root.addHandler(capture)
    root.setLevel(logging.INFO)
    try:
        with serving(settings) as server:
            yield server, capture
    finally:
        root.removeHandler(capture)
        root.setLevel(old)


def _runner(server: ServerThread) -> web.AppRunner:
    assert server.server is not None
    runner = server.server.runner
    assert isinstance(runner, web.AppRunner)
    return runner


def _budget(server: ServerThread) -> BodyBudget:
    return _runner(server).app[BODY_LIMITS_KEY].budget


def _head(server: ServerThread, path: str, length: int, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Bearer {server.token}\r\n"
        f"{extra}Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


@pytest.mark.slow
def test_a_body_beyond_the_budget_waits_then_is_served(tight_server: tuple[ServerThread, LogCapture]) -> None:
    server, logs = tight_server
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=60) as big,
        socket.create_connection(("127.0.0.1", server.port), timeout=60) as small,
    ):
        body = b'{"q": "' + b"x" * (MAX_BODY_BYTES - 9) + b'"}'  # exactly the cap: the whole budget
        big.sendall(_head(server, "/mcp", len(body), MCP_HEADERS.split("\r\n")[1] + "\r\n") + body[:1000])
        # The big body holds the whole budget while it arrives; the small one must wait.
        budget = _budget(server)
        wait_until(lambda: budget.free < budget.limit, 30, "the big body holding the budget")
        small_body = b"{}"
        small.sendall(_head(server, "/coverage", len(small_body)) + small_body)
        wait_until(lambda: any('"body_queued"' in ln for ln in logs.lines), 30, "the small body queued")
        big.sendall(body[1000:])
        big_status, _, _ = read_response(big)
        small_status, _, small_text = read_response(small)
    assert big_status in (400, 406)  # the SDK's answer to a request without a session: it was read
    assert small_status == 400 and json.loads(small_text)["error"]["code"] == "INVALID_PARAMETER"


@pytest.mark.slow
def test_a_body_that_finds_no_room_in_time_is_503(tight_server: tuple[ServerThread, LogCapture]) -> None:
    server, _ = tight_server
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=60) as big,
        socket.create_connection(("127.0.0.1", server.port), timeout=60) as small,
    ):
        big.sendall(_head(server, "/coverage", MAX_BODY_BYTES) + b"{")  # stalls, holding the budget
        budget = _budget(server)
        wait_until(lambda: budget.free < budget.limit, 30, "the stalled body holding the budget")
        small.sendall(_head(server, "/coverage", 2) + b"{}")
        status, headers, text = read_response(small)
    assert (status, headers.get("retry-after"), json.loads(text)) == (
        503,
        "1",
        {
            "error": {
                "code": "SERVER_UNAVAILABLE",
                "message": "the server is receiving too many large requests at once; retry in a moment",
            }
        },
    )


def test_a_trickled_body_times_out_with_408(tmp_path: Path) -> None:
    settings = dataclasses.replace(build_fixture_vault(tmp_path), body_timeout_seconds=1)
    with (
        serving(settings) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock,
    ):
        sock.sendall(_head(server, "/coverage", 100) + b"{")
        status, headers, text = read_response(sock)
    assert (status, headers.get("connection"), json.loads(text)["error"]) == (
        408,
        "close",
        {
            "code": "INVALID_PARAMETER",
            "message": "the request body did not arrive within 1 s; send it at once",
        },
    )


@pytest.mark.parametrize("path", ["/mcp", "/coverage"])
def test_a_client_that_leaves_mid_upload_is_one_quiet_line(tmp_path: Path, path: str) -> None:
    settings = build_fixture_vault(tmp_path)
    served = _serve_with_logs(settings)
    server, logs = next(served)
    try:
        budget = _budget(server)
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
            sock.sendall(
                _head(server, path, MAX_BODY_BYTES, MCP_HEADERS.split("\r\n")[1] + "\r\n") + b"x" * 100_000
            )
            wait_until(lambda: budget.free < budget.limit, 30, "the server reading the body")
        wait_until(lambda: any('"status": 499' in ln for ln in logs.lines), 30, "the request line")
        web_server = _runner(server).server
        assert web_server is not None
        wait_until(lambda: not web_server.connections, 30, "the connection gone")
        lines = [json.loads(ln) for ln in logs.lines]
        assert [(ln["event"], ln["route"], ln["status"], ln["level"]) for ln in lines if ln.get("event")] == [
            ("request", path, 499, "INFO")
        ]
        assert not [ln for ln in lines if ln["level"] in ("WARNING", "ERROR") or "exc" in ln]
    finally:
        served.close()
