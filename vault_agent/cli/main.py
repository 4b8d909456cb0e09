"""The `vault-agent` command: a typer app whose commands live in small modules.

Local commands (index, reindex, status, watch) work on the state dir; serve and mcp start
servers; every other command is server-backed and generated from the operation registry.
"""

from __future__ import annotations

import importlib
import os

import typer

app = typer.Typer(
    name="vault-agent",
    help="Index a Markdown vault and serve it to AI agents over CLI, HTTP and MCP.\n\n"
    "Start with: vault-agent index --vault PATH, then vault-agent serve --watch --vault PATH.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module adds its commands to `app` when imported; a missing module is skipped so
# that the tree works while commands are being added.
COMMAND_MODULES = ("local", "serve", "conversations", "remote")


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            importlib.import_module(f"vault_agent.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"vault_agent.cli.{name}":
                raise


def run() -> None:
    """Console-script entry point."""
    from vault_agent.api.logging_setup import configure_logging

    # From the first line on, every log record goes through the path-scrubbing JSON
    # formatter (a long `watch` logs watcher failures too); `settings_from` adds this
    # invocation's vault and state dir to what it scrubs.
    configure_logging(os.environ.get("VAULT_AGENT_LOG_LEVEL", "WARNING"))
    _load_commands()
    app()


_load_commands()
