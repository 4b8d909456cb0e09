"""The `vault-agent` console script.

A server-backed command is one HTTP call. `vault-agent search WORD` reads its arguments
with `quick_args.parse` from the generated command table and sends the request: no typer,
no params models, no catalog (the server validates the parameters, as for every client).
When the command line is anything but plain (`search --help`, an unknown flag, a missing
argument), a root app holding only that command parses it, with typer's help and errors.
Everything else (`--help`, local commands, servers, a mistyped command) runs the full app. Importing this module stays light (no DuckDB, pyarrow, mcp, aiohttp or
indexer); local commands import their engine when they run (tests/cli/test_thin_cli.py).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from vault_agent.arrow_pool_env import prefer_system_arrow_pool
from vault_agent.cli.version import version_line

# One-shot commands log warnings only unless VAULT_AGENT_LOG_LEVEL says otherwise; the
# settings' default (INFO) is the level of the servers' request log, set by `serve`/`mcp`.
CLI_LOG_LEVEL = "WARNING"


def run() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    if args == ["--version"]:  # what the root's eager --version prints, without building it
        sys.stdout.write(version_line() + "\n")
        return
    prefer_system_arrow_pool(args[0] if args else None, os.environ)  # before pyarrow loads
    from vault_agent.api.logging_setup import configure_logging
    from vault_agent.config import env_setting

    # From the first line on, every log record goes through the path-scrubbing JSON
    # formatter (a long `watch` logs watcher failures too); `settings_from` adds this
    # invocation's vault and state dir to what it scrubs.
    configure_logging(env_setting("log_level") or CLI_LOG_LEVEL)
    from vault_agent.cli.command_table import COMMANDS

    # A command is one word (`search`) or a group and its sub-command (`task set`).
    words = 1 if args and args[0] in COMMANDS else 2
    spec = COMMANDS.get(" ".join(args[:words])) if len(args) >= words else None
    if spec is not None:
        from vault_agent.cli.quick_args import parse

        kwargs = parse(spec, args[words:])
        if kwargs is not None:  # the usual command line: no typer at all
            from vault_agent.cli.request import execute

            execute(spec, kwargs)
            return
        from vault_agent.cli.remote import single_command_app

        single_command_app(spec)()
        return
    from vault_agent.cli.app import full_app

    full_app()()


def __getattr__(name: str) -> Any:
    """`from vault_agent.cli.main import app`: the app with every command (tests, docs)."""
    if name == "app":
        from vault_agent.cli.app import full_app

        return full_app()
    raise AttributeError(name)
