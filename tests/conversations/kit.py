"""Test kit for conversations: SDK clients with callbacks, an SSE reader, CLI runs."""

from __future__ import annotations

import http.client
import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from api.serverkit import VAULT_AGENT, ClosingClient
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from vault_agent.config import Settings

CANARY = "zebra-canary-7f3a"  # note text that must never reach a record


class Inbox:
    """What a client received: log notifications and elicitation questions (answered)."""

    def __init__(self, answer: str | None = "yes, go ahead") -> None:
        self.notifications: list[Any] = []
        self.questions: list[str] = []
        self.answer = answer

    async def on_log(self, params: Any) -> None:
        self.notifications.append(params)

    async def on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        if self.answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"reply": self.answer})

    def messages(self) -> list[str]:
        return [n.data["text"] for n in self.notifications if n.logger == "vault-agent.messages"]


def http_client(url: str, token: str, inbox: Inbox, **kwargs: Any) -> Any:
    """A real SDK client over Streamable HTTP (legacy handshake), closing its httpx client."""
    hc = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    client = Client(
        streamable_http_client(url + "/mcp", http_client=hc),
        mode=kwargs.pop("mode", "legacy"),
        logging_callback=inbox.on_log,
        elicitation_callback=inbox.on_elicit,
        **kwargs,
    )
    return ClosingClient(client, hc)


def stdio_client(settings: Settings, inbox: Inbox, *args: str) -> Client:
    params = StdioServerParameters(
        command=VAULT_AGENT,
        args=["mcp", "--vault", str(settings.vault), *args],
        env={"VAULT_AGENT_LOG_LEVEL": "WARNING"},
        cwd=str(settings.vault),
    )
    return Client(params, mode="legacy", logging_callback=inbox.on_log, elicitation_callback=inbox.on_elicit)


class SseReader:
    """Reads `GET /messages/stream` in a thread; `connected` is set once subscribed."""

    def __init__(self, port: int, token: str) -> None:
        self.events: list[dict[str, Any]] = []
        self.connected = threading.Event()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.conn.request("GET", "/messages/stream", headers={"Authorization": f"Bearer {token}"})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while True:
                raw = self.resp.readline()
                if not raw:
                    return
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith(": vault-agent"):
                    self.connected.set()
                elif line.startswith("data: "):
                    self.events.append(json.loads(line[6:]))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return  # close() pulled the connection from under the reader

    def close(self) -> None:
        self.conn.close()
        self.thread.join(30)


def cli(settings: Settings, *args: str) -> tuple[int, Any, str]:
    """Run `vault-agent ARGS --json --vault V`; (exit code, parsed stdout, stderr)."""
    proc = subprocess.run(
        [VAULT_AGENT, *args, "--json", "--vault", str(settings.vault)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(settings.vault),
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, out, proc.stderr


def read_bytes(settings: Settings, rel: str) -> bytes | None:
    path = Path(settings.vault) / rel
    return path.read_bytes() if path.exists() else None


class Answerer:
    """A person at another terminal: waits (bounded) until a question is open, then answers.

    `questions()` lists the open questions (any surface); `reply(question)` answers one.
    Runs in a thread so the agent's call can block on the question meanwhile.
    """

    def __init__(self, questions: Any, reply: Any) -> None:
        self.questions, self.reply = questions, reply
        self.answered: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from testkit import wait_until

        try:
            found: list[dict[str, Any]] = []

            def question_open() -> bool:
                found.extend(self.questions())
                return bool(found)

            wait_until(question_open, what="an open question")
            self.answered.append(found[0])
            self.reply(found[0])
        except BaseException as exc:  # reported by join()
            self.error = exc

    def join(self) -> list[dict[str, Any]]:
        self.thread.join(60)
        if self.error is not None:
            raise self.error
        return self.answered


class RawMcp:
    """A real `vault-agent mcp` process spoken to line by line (so a test can kill it, or
    send what the SDK client never would). `umask` runs it under that umask."""

    def __init__(self, settings: Settings, *args: str, umask: int | None = None) -> None:
        argv = [VAULT_AGENT, "mcp", "--vault", str(settings.vault), *args]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=str(settings.vault),
            env={**os.environ, "VAULT_AGENT_LOG_LEVEL": "WARNING"},
            preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self._id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8"))

    def send_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def next_message(self) -> dict[str, Any]:
        return json.loads(self.lines.get(timeout=60))

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; notifications that arrive first are skipped."""
        self._id += 1
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}))
        while True:
            msg = self.next_message()
            if msg.get("id") == self._id:
                return msg

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-client", "version": "1"},
            },
        )
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"]

    def kill(self) -> None:
        """SIGKILL: nothing of the process runs after it."""
        self.proc.kill()
        self.close()

    def close(self) -> int:
        """Close stdin (the client leaves) and wait for the process to exit."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(60)
        self.reader.join(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code


def editor_save(path: Path, data: bytes) -> None:
    """Save like most editors: a temp file beside the note, then rename over it."""
    tmp = path.with_name(f".{path.name}.swp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
