"""Connection floods against a real `serve --watch` process (issue 20, item 4).

- 1,100 half-open unauthenticated connections under a 1,024-descriptor limit: requests with
  the token are still answered, the index build does not fail with EMFILE, the heartbeat
  lives, and the log stays a handful of lines.
- Slowloris: clients trickling one header byte at a time are dropped at the header timeout.
- Descriptors exhausted inside the server: failed accepts become one rate-limited line, and
  connections are served again once descriptors are free.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from testkit import wait_until

from api.processkit import ServeChild, closed_by_peer, read_response, write_notes

FLOOD = 1_100
NOFILE = 1_024


def _token(vault: Path) -> str:
    return (vault / ".vault-agent" / "token").read_text().strip()


def _open_many(serve: ServeChild, count: int, first_bytes: bytes = b"") -> list[socket.socket]:
    socks: list[socket.socket] = []
    for _ in range(count):
        sock = serve.connect(timeout=30)
        if first_bytes:
            with contextlib.suppress(OSError):  # the server may already have closed it
                sock.sendall(first_bytes)
        socks.append(sock)
    return socks


@pytest.mark.slow
def test_half_open_flood_under_a_low_descriptor_limit(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_notes(vault, 300)
    serve = ServeChild("--watch", "--vault", str(vault), nofile=NOFILE)
    socks: list[socket.socket] = []
    try:
        token = _token(vault)
        wait_until(lambda: serve.get("/status", token)[1]["data"]["noteCount"] == 300, 120, "first index")
        # Half of the flood sends the start of a request head, half nothing at all.
        socks = _open_many(serve, FLOOD // 2, b"GET /status HTTP/1.1\r\nHo") + _open_many(serve, FLOOD // 2)
        for _ in range(5):
            status, body = serve.get("/status", token)
            assert status == 200 and body["data"]["noteCount"] == 300
        # The index build runs during the flood: 200 notes more, a commit, no EMFILE.
        write_notes(vault, 200, start=300)

        def built() -> bool:
            data = serve.get("/status", token)[1]["data"]
            return bool(data["noteCount"] == 500 and data["indexFreshness"] == "fresh")

        wait_until(built, 120, "the build during the flood")
        writer = json.loads((vault / ".vault-agent" / "writer.json").read_text())
        assert time.time() - writer["heartbeat_at"] < 10  # the heartbeat lives
        assert writer["components"].get("heartbeat", {}).get("restarts", 0) == 0
    finally:
        for sock in socks:
            sock.close()
        code = serve.stop()
    assert code == 0
    text = "\n".join(serve.lines)
    assert "Too many open files" not in text and "EMFILE" not in text and "out of system resource" not in text
    others = [
        ln
        for ln in serve.logs()
        if ln.get("event") not in ("request",) and ln.get("msg") != "snapshot loaded"
    ]
    limit_lines = [ln for ln in others if ln.get("event") == "connection_limit"]
    assert limit_lines  # the flood is reported, rate-limited (one line per 10 s)
    assert len(others) <= 12, others  # a handful of lines, not 153 MB


@pytest.mark.slow
def test_slowloris_clients_are_dropped_at_the_header_timeout(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_notes(vault, 20)
    env = {
        "VAULT_AGENT_HEADER_TIMEOUT_SECONDS": "2",
        # Room for all of them, so what closes them is the header timeout, not eviction.
        "VAULT_AGENT_MAX_UNAUTHENTICATED_CONNECTIONS": "500",
    }
    serve = ServeChild("--watch", "--vault", str(vault), env=env)
    socks: list[socket.socket] = []
    stop = threading.Event()
    try:
        token = _token(vault)
        head = f"GET /status HTTP/1.1\r\nHost: 127.0.0.1:{serve.port}\r\nAuthorization: Bearer {token}\r\n".encode()
        socks = _open_many(serve, 400)

        def trickle() -> None:  # one header byte per client per round, for as long as they last
            for i in range(len(head)):
                for sock in socks:
                    with contextlib.suppress(OSError):
                        sock.send(head[i : i + 1])
                if stop.wait(0.2):
                    return

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        assert serve.get("/status", token)[0] == 200  # a real client is served meanwhile
        wait_until(lambda: all(closed_by_peer(s) for s in socks), 60, "every slow client dropped")
        assert sender.is_alive()  # they were still sending when they were dropped
    finally:
        stop.set()
        for sock in socks:
            sock.close()
        serve.stop()
    assert not [ln for ln in serve.logs() if ln.get("level") in ("ERROR", "CRITICAL")]


# A server whose own descriptors run out on command (what a flood did before the caps, or
# another part of the process could still do): asyncio's accepts then fail with EMFILE.
EXHAUST = """
import asyncio, os, sys
from vault_agent.server.context import close_context
from vault_agent.server.http_server import start_server
from vault_agent.api.logging_setup import configure_logging
from vault_agent.api.operation import AppContext
from vault_agent.paths import vault_for_settings
from vault_agent.config import load_settings
from vault_agent.query.snapshot import SnapshotReader

settings = load_settings({"vault": sys.argv[1]}, env={})
configure_logging("INFO", vault=settings.vault, index_dir=settings.index_dir)
vault = vault_for_settings(settings)
ctx = AppContext(settings=settings, vault=vault, reader=SnapshotReader(settings, vault))
held = []

async def main():
    server = await start_server(ctx, "127.0.0.1", 0, mcp=False)
    print(server.port, flush=True)
    loop = asyncio.get_running_loop()
    while (line := (await loop.run_in_executor(None, sys.stdin.readline)).strip()) != "quit":
        if line == "exhaust":
            try:
                while True:
                    held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                pass
        elif line == "release":
            while held:
                os.close(held.pop())
        print("ok", flush=True)
    await server.stop()

asyncio.run(main())
close_context(ctx)
"""


def _send_status(port: int, token: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(
        f"GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    return sock


@pytest.mark.slow
def test_accept_failures_are_one_line_and_serving_resumes(tmp_path: Path) -> None:
    from api.serverkit import build_fixture_vault

    settings = build_fixture_vault(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", EXHAUST, str(settings.vault)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    socks: list[socket.socket] = []
    err_lines: list[str] = []
    stderr = proc.stderr
    drain = threading.Thread(target=lambda: err_lines.extend(iter(stderr.readline, "")), daemon=True)
    drain.start()
    try:
        port = int(proc.stdout.readline())
        token = settings.token_file.read_text().strip()

        def say(word: str) -> None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(word + "\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "ok"

        say("exhaust")
        socks = [_send_status(port, token) for _ in range(50)]  # the kernel queues them
        wait_until(lambda: any('"accept_failed"' in ln for ln in err_lines), 30, "a failed accept")
        say("release")
        assert {read_response(s)[0] for s in socks} == {200}  # all served once free
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        for sock in socks:
            sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        drain.join(timeout=30)
        err = "".join(err_lines)
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    lines = [json.loads(ln) for ln in err.splitlines() if ln.startswith("{")]
    failed = [ln for ln in lines if ln.get("event") == "accept_failed"]
    assert 1 <= len(failed) <= 2, failed  # one line per 10 s, with the count
    assert failed[0]["msg"].startswith("cannot accept connections (EMFILE")
    assert "Traceback" not in err and "out of system resource" not in err
