"""The full `vault-agent` app, built from its command modules in one visible list.

Local commands (index, reindex, watch, status), the servers (serve, mcp), the web page's
sign-in link (web) and
`conversations`/`messages` are plain functions in their modules (their docstrings are their
help); this module adds them to a root (`cli/root.py`), then one command per entry of the
generated command table that no local command already is (`cli/remote.py`). The order here
is the order of `vault-agent --help`. The command modules import neither this module nor a root.
"""

from __future__ import annotations

from functools import cache

import typer

from vault_agent.cli import conversations, local, serve, web
from vault_agent.cli.remote import register_commands
from vault_agent.cli.root import flags_without_types, root


def local_app() -> typer.Typer:
    """A root with the commands that are not built from the command table."""
    app = root()
    app.command()(local.index)
    app.command()(local.reindex)
    app.command()(local.watch)
    app.command()(local.status)  # works without a server: it shadows the table's `status`
    app.command(name="serve")(serve.serve_command)
    app.command(name="mcp")(serve.mcp_command)
    app.command(name="web")(web.web)
    app.add_typer(conversations.conversations, name="conversations")
    app.command("messages")(conversations.messages_command)
    return app


def local_command_names(app: typer.Typer) -> set[str]:
    """Names of the commands on `app` (a `local_app()`), the command table leaves them out."""
    return {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}


@cache
def full_app() -> typer.Typer:
    """The app with every command (built once)."""
    app = local_app()
    register_commands(app, local_command_names(app))
    flags_without_types(app)
    return app
