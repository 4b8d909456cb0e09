"""`serve` (HTTP + Streamable HTTP MCP at /mcp) and `mcp` (MCP over stdio): composition roots.

`serve --watch` makes this process the index's single writer for its whole life (exit 5
beside another writer). `mcp` watches too unless `--no-watch`, but when another process
already holds the writer lock it serves read-only from that writer's snapshots and says
so once on stderr — stdout is the MCP protocol and carries nothing else.
SIGINT/SIGTERM stop gracefully: the server closes, the writer stops, the lock is released.
"""

from __future__ import annotations

import contextlib
import errno
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from vault_agent.cli.common import (
    ConfigOpt,
    IndexDirOpt,
    JsonOpt,
    VaultOpt,
    options_command,
    run_command,
    settings_from,
)
from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter
from vault_agent.server_address import forget_server, record_server

if TYPE_CHECKING:
    from vault_agent.api.operation import AppContext

HostOpt = Annotated[
    str | None, typer.Option("--host", help="Address to bind (default 127.0.0.1).", show_default=False)
]
PortOpt = Annotated[
    int | None, typer.Option("--port", help="Port (default 8765; 0 picks a free one).", show_default=False)
]
AllowWritesOpt = Annotated[
    bool, typer.Option("--allow-writes", help="List and allow the write tools (off by default).")
]
ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--tool-profile",
        help="MCP tool profile: default, or agent-files (adds seed 003 names).",
        show_default=False,
    ),
]


def _settings(vault, index_dir, config, **flags) -> Settings:  # type: ignore[no-untyped-def]
    return settings_from(vault, index_dir, config, **{k: v for k, v in flags.items() if v is not None})


@contextlib.contextmanager
def _started(
    settings: Settings, command: str, *, watch: bool, follow_if_busy: bool, log_stream: TextIO | None = None
) -> Iterator[AppContext]:
    """The start-up both servers share: logging, the context (writer or follower), the one
    read-only line on stderr; the context is closed (writer stopped, lock released) on exit."""
    from vault_agent.api.logging_setup import configure_logging
    from vault_agent.server.context import build_context, close_context  # here: the CLI's table stays light

    configure_logging(
        settings.log_level, vault=settings.vault, index_dir=settings.index_dir, stream=log_stream
    )
    ctx = build_context(settings, watch=watch, follow_if_busy=follow_if_busy)
    try:
        _say_read_only(ctx, command)
        yield ctx
    finally:
        close_context(ctx)


async def _serve(ctx: AppContext, settings: Settings) -> None:
    import asyncio  # here, not at the top: the CLI's command table stays light

    from vault_agent.server.http_server import start_server

    try:
        server = await start_server(ctx, settings.host, settings.port)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        # A second `serve` on the same port is a newcomer's first mistake: say what to do.
        raise InvalidParameter(
            f"port {settings.port} on {settings.host} is already in use (another 'vault-agent serve'?); "
            "pick another with --port N, or --port 0 for any free port (it prints the one it got)"
        ) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # The CLI finds this server for this vault by itself (server_address.py).
    record_server(settings.index_dir, server.url, settings.host, server.port)
    sys.stdout.write(f"listening on {server.url}\n")
    # The owner's page, without any secret: services log stdout, and the bearer token never
    # appears on an output (SPEC). `vault-agent web` prints a one-time sign-in link.
    sys.stdout.write(f"web: {server.web_url}\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        forget_server(settings.index_dir)
        await server.stop()


@dataclass(frozen=True)
class ServeOptions:
    """serve's options, in its --help order (each type is its typer option)."""

    vault: VaultOpt = None
    index_dir: IndexDirOpt = None
    config: ConfigOpt = None
    json_out: JsonOpt = False
    host: HostOpt = None
    port: PortOpt = None
    watch: Annotated[bool, typer.Option("--watch", help="Also watch the vault and keep the index fresh.")] = (
        False
    )
    allow_writes: AllowWritesOpt = False
    tool_profile: ProfileOpt = None


def serve(options: ServeOptions) -> None:
    """Serve the vault over HTTP, with MCP (Streamable HTTP) at /mcp.

    Prints one line 'listening on http://HOST:PORT' when ready, then 'web: http://HOST:PORT/',
    the owner's web page (health, search, conversations, undo); 'vault-agent web' signs a
    browser in. Every API request needs the bearer token from <index-dir>/token (created 0600 on
    first start) or VAULT_AGENT_TOKEN; no output of serve ever shows it.

    Example: vault-agent serve --watch --vault ~/notes --port 8765
    """

    def body() -> None:
        import asyncio

        settings = _settings(
            options.vault,
            options.index_dir,
            options.config,
            host=options.host,
            port=options.port,
            writes_enabled=True if options.allow_writes else None,
            tool_profile=options.tool_profile,
        )
        with _started(settings, "serve", watch=options.watch, follow_if_busy=False) as ctx:
            asyncio.run(_serve(ctx, settings))

    run_command(options.json_out, body)


serve_command = options_command(ServeOptions, serve)  # the typer command: one parameter per option


def _say_read_only(ctx: AppContext, command: str) -> None:
    """One stderr line when this process serves without being the writer (stdout of
    `mcp` is the protocol and carries nothing else)."""
    if ctx.read_only_reason:
        sys.stderr.write(
            f"vault-agent {command}: the index state dir cannot be written "
            f"({ctx.read_only_reason}); serving the last snapshot read-only\n"
        )
    elif ctx.follower:
        sys.stderr.write(
            f"vault-agent {command}: another vault-agent process is indexing this vault; "
            "serving read-only from its snapshots\n"
        )
    sys.stderr.flush()


def _raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def mcp_command(
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    no_watch: Annotated[
        bool, typer.Option("--no-watch", help="Do not watch or index; serve snapshots only.")
    ] = False,
    allow_writes: AllowWritesOpt = False,
    tool_profile: ProfileOpt = None,
) -> None:
    """Serve MCP over stdio for one vault (what Claude Desktop / Claude Code start).

    Watches the vault and keeps the index fresh unless --no-watch; when another vault-agent process
    already indexes the vault, serves read-only from its snapshots.

    Example: vault-agent mcp --vault ~/notes
    """

    def body() -> None:
        import anyio

        from vault_agent.api.mcp_server import build_mcp_server
        from vault_agent.api.ops import CATALOG

        settings = _settings(
            vault,
            index_dir,
            config,
            writes_enabled=True if allow_writes else None,
            tool_profile=tool_profile,
        )
        signal.signal(signal.SIGTERM, _raise_interrupt)
        # stdout is the MCP protocol: logs go to stderr.
        with _started(settings, "mcp", watch=not no_watch, follow_if_busy=True, log_stream=sys.stderr) as ctx:
            server = build_mcp_server(ctx, CATALOG)
            with contextlib.suppress(KeyboardInterrupt):
                anyio.run(server.run_stdio_async)

    run_command(json_out, body)
