"""Test kit: fixture vaults with a real snapshot, a real aiohttp server on 127.0.0.1 in a
background thread, captured JSON log lines, raw HTTP calls and real MCP SDK clients."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from vault_agent.api.logging_setup import JsonFormatter, default_scrubber
from vault_agent.api.operation import AppContext, Catalog
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings, load_settings
from vault_agent.contracts import Freshness
from vault_agent.paths import vault_for_settings
from vault_agent.server.context import close_context
from vault_agent.server.http_server import RunningServer, start_server

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
VAULT_AGENT = str(Path(sys.executable).parent / "vault-agent")
CANARY = "zebra-canary-7f3a"  # note text that must never reach a log, error or listing


# What a user may leave inside a checked-out fixture (the demo's state dir after
# `bash ops/demo.sh`, caches): a test copy must start from the committed notes only.
_LEFT_BEHIND = shutil.ignore_patterns(".vault-agent", "__pycache__", ".DS_Store")


def copy_fixture(name: str, dest: Path, fixtures: Path = FIXTURES) -> Path:
    """Copy fixtures/<name> to dest without state a user may have left in the checkout."""
    shutil.copytree(fixtures / name, dest, ignore=_LEFT_BEHIND)
    return dest


def build_fixture_vault(
    tmp_path: Path, name: str = "orientation", extra: dict[str, str] | None = None
) -> Settings:
    """Copy a fixture vault into tmp_path (plus extra files) and commit a full snapshot."""
    from vault_agent.indexer.build import build_index

    vault = tmp_path / "vault"
    copy_fixture(name, vault)
    for rel, text in (extra or {}).items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    settings = load_settings({"vault": vault}, env={})
    build_index(settings, full=True)
    return settings


def make_context(settings: Settings, *, pinned: Freshness | None = "fresh") -> AppContext:
    """A read-only context; `pinned` fixes the snapshot freshness for deterministic answers."""
    from vault_agent.query.snapshot import SnapshotReader

    vault = vault_for_settings(settings)
    freshness = None if pinned is None else (lambda _m: pinned)
    return AppContext(
        settings=settings, vault=vault, reader=SnapshotReader(settings, vault, freshness=freshness)
    )


@contextmanager
def serving(settings: Settings, *, pinned: Freshness | None = "fresh") -> Iterator[ServerThread]:
    """A real server for `settings` on loopback; stopped and its context closed on exit."""
    ctx = make_context(settings, pinned=pinned)
    thread = ServerThread(ctx).start()
    try:
        yield thread
    finally:
        thread.stop()
        close_context(ctx)


class LogCapture(logging.Handler):
    """Collects every log record as the JSON line the server would print."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(JsonFormatter(default_scrubber(settings.vault, settings.index_dir)))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(ln) for ln in self.lines if '"event": "request"' in ln]


@contextmanager
def capturing_logs(settings: Settings) -> Iterator[LogCapture]:
    """Every log record (DEBUG and up) of the process as JSON lines, while the body runs."""
    capture = LogCapture(settings)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)


class ServerThread:
    """`start_server` on its own event loop in a thread; stop() always cleans up."""

    def __init__(
        self, ctx: AppContext, host: str = "127.0.0.1", *, mcp: bool = True, catalog: Catalog = CATALOG
    ) -> None:
        self.ctx = ctx
        self.host = host
        self.mcp = mcp
        self.catalog = catalog
        self.loop = asyncio.new_event_loop()
        self.server: RunningServer | None = None
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def boot() -> None:
            try:
                self.server = await start_server(self.ctx, self.host, 0, mcp=self.mcp, catalog=self.catalog)
            except BaseException as exc:  # reported to the test thread
                self.error = exc
            finally:
                self._ready.set()

        self.loop.run_until_complete(boot())
        if self.error is None:
            self.loop.run_forever()
        self.loop.run_until_complete(self.loop.shutdown_default_executor())
        self.loop.close()

    def start(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(30):
            raise TimeoutError("server did not start")
        if self.error is not None:
            self._thread.join(10)
            raise self.error
        return self

    def stop(self) -> None:
        if self.server is not None:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    @property
    def token(self) -> str:
        assert self.server is not None
        return self.server.policy.token

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        token: str | None | bool = True,
    ) -> tuple[int, dict[str, str], str]:
        """One raw HTTP exchange; `token=True` sends the right token, a string sends that."""
        hdrs = {"Content-Type": "application/json"} if body is not None else {}
        if token is True:
            hdrs["Authorization"] = f"Bearer {self.token}"
        elif isinstance(token, str):
            hdrs["Authorization"] = f"Bearer {token}"
        hdrs.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8")
        finally:
            conn.close()

    def get_json(self, path: str) -> tuple[int, dict[str, str], Any]:
        status, headers, text = self.request("GET", path)
        return status, headers, json.loads(text)


def http_mcp_client(url: str, token: str | None, mode: str = "legacy") -> AbstractAsyncContextManager[Client]:
    """A real SDK client over Streamable HTTP (legacy handshake + SSE, or 'auto')."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http_client = httpx2.AsyncClient(headers=headers, timeout=60)
    return ClosingClient(
        Client(streamable_http_client(url + "/mcp", http_client=http_client), mode=mode), http_client
    )


class ClosingClient:
    """An SDK client that also closes the httpx client it was given (tests share this one)."""

    def __init__(self, client: Client, http_client: httpx2.AsyncClient) -> None:
        self.client, self.http_client = client, http_client

    async def __aenter__(self) -> Client:
        return await self.client.__aenter__()

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.client.__aexit__(*exc)
        finally:
            await self.http_client.aclose()


def stdio_mcp_client(
    settings: Settings, *args: str, env: dict[str, str] | None = None, mode: str = "legacy"
) -> Client:
    """A real SDK client that spawns `vault-agent mcp` over stdio (legacy handshake or 'auto')."""
    params = StdioServerParameters(
        command=VAULT_AGENT,
        args=["mcp", "--vault", str(settings.vault), *args],
        env={"VAULT_AGENT_LOG_LEVEL": "WARNING", **(env or {})},
        cwd=str(settings.vault),
    )
    return Client(params, mode=mode)
