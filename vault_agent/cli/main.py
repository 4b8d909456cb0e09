"""The `vault-agent` command: a typer app whose commands live in small modules.

Local commands (index, reindex, status, watch) work on the state dir; serve and mcp start
servers; every other command is server-backed and generated from the operation registry.
Importing the command table stays light (no DuckDB, pyarrow, mcp, aiohttp or indexer):
a server-backed command is one HTTP call, and local commands import their engine when
they run (tests/cli/test_thin_cli.py keeps it so).
"""

from __future__ import annotations

from typing import Annotated

import typer

from vault_agent.cli.help_format import GroupFlagsWithoutTypes

# One-shot commands log warnings only unless VAULT_AGENT_LOG_LEVEL says otherwise; the
# settings' default (INFO) is the level of the servers' request log, set by `serve`/`mcp`.
CLI_LOG_LEVEL = "WARNING"

app = typer.Typer(
    cls=GroupFlagsWithoutTypes,
    name="vault-agent",
    help="Index a Markdown vault and serve it to AI agents over CLI, HTTP and MCP.\n\n"
    "Start with: vault-agent index --vault PATH, then vault-agent serve --watch --vault PATH.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help and usage errors: rich's formatter imports rich.markdown and
    # markdown-it, which would double the time `--help` takes.
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"vault-agent {version('vault-agent')}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Index a Markdown vault and serve it to AI agents over CLI, HTTP and MCP."""


def _load_commands() -> None:
    """Each command module adds its commands to `app` when imported (they import `app`)."""
    # The import order is the order of `vault-agent --help`: local, servers, then the rest.
    from vault_agent.cli import local  # noqa: F401, I001
    from vault_agent.cli import serve  # noqa: F401
    from vault_agent.cli import conversations  # noqa: F401
    from vault_agent.cli import remote  # noqa: F401
    from typer.core import TyperCommand

    from vault_agent.cli.help_format import FlagsWithoutTypes

    for info in app.registered_commands:  # one place: flags show no "<bool>" in any --help
        if info.cls is None or info.cls is TyperCommand:
            info.cls = FlagsWithoutTypes


def run() -> None:
    """Console-script entry point."""
    from vault_agent.api.logging_setup import configure_logging
    from vault_agent.config import env_setting

    # From the first line on, every log record goes through the path-scrubbing JSON
    # formatter (a long `watch` logs watcher failures too); `settings_from` adds this
    # invocation's vault and state dir to what it scrubs.
    configure_logging(env_setting("log_level") or CLI_LOG_LEVEL)
    app()


_load_commands()
