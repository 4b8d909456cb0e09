"""Test kit for fault trials: `vault-agent serve` as a child process (optionally under a lowered
descriptor limit) whose JSON log lines are collected as they come, synthetic vaults, raw sockets."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from api.serverkit import VAULT_AGENT


def write_notes(vault: Path, count: int, start: int = 0, folder: str = "notes") -> None:
    """`count` small synthetic notes (seed 000's rules: generated text, no real vault)."""
    (vault / folder).mkdir(parents=True, exist_ok=True)
    for i in range(start, start + count):
        (vault / folder / f"n{i:05d}.md").write_text(
            f"---\ntags: [t{i % 7}]\n---\n# Note {i}\n\nbody of note {i} about topic {i % 13}\n",
            encoding="utf-8",
        )


class ServeChild:
    """`vault-agent serve ARGS` in a child process; stderr lines collected on a thread."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, nofile: int | None = None) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
        clean.update({"VAULT_AGENT_SEMANTIC": "off", **(env or {})})

        def lower_limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen(
            [VAULT_AGENT, "serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean,
            preexec_fn=lower_limit,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().strip()
        if not first.startswith("listening on "):
            self.stop()
            raise AssertionError(f"serve did not start: {first!r} {self.lines[-5:]}")
        self.port = int(first.rsplit(":", 1)[1])

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def logs(self) -> list[dict[str, Any]]:
        """Every JSON log line so far."""
        return [json.loads(ln) for ln in list(self.lines) if ln.startswith("{")]

    def events(self, event: str) -> list[dict[str, Any]]:
        return [ln for ln in self.logs() if ln.get("event") == event]

    def get(self, path: str, token: str, timeout: float = 30.0) -> tuple[int, dict[str, Any]]:
        """GET with the token; (status, JSON body)."""
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, json.loads(exc.read())

    def connect(self, timeout: float = 30.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self._reader.join(timeout=30)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode


def closed_by_peer(sock: socket.socket) -> bool:
    """True when the server has closed this connection (EOF or reset), without blocking."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], str]:
    """One HTTP/1.1 response read off a raw socket: (status, lower-cased headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v for k, v in (ln.split(": ", 1) for ln in lines[1:] if ": " in ln)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body.decode("utf-8", "replace")
