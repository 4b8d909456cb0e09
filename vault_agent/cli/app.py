"""The root typer app, and the command modules that fill it.

Local commands (index, reindex, status, watch), the servers (serve, mcp) and
`conversations`/`messages` are typer functions in their modules, added to `app` when the
module is imported. Server-backed commands are built from the generated command table
(`cli/remote.py`). `root()` makes a root with the same name, help and `--version`, so
that `vault-agent search WORD` can run a root that holds only `search`
(see `cli/main.py`): same parsing, help and errors, without building the other commands.
"""

from __future__ import annotations

from typing import Annotated

import typer

from vault_agent.cli.help_format import FlagsWithoutTypes, GroupFlagsWithoutTypes

HELP = (
    "Index a Markdown vault and serve it to AI agents over CLI, HTTP and MCP.\n\n"
    "Start with: vault-agent index --vault PATH, then vault-agent serve --watch --vault PATH."
)


def _print_version(value: bool) -> None:
    if value:
        from vault_agent.cli.main import version_line

        typer.echo(version_line())
        raise typer.Exit()


def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Index a Markdown vault and serve it to AI agents over CLI, HTTP and MCP."""


def root() -> typer.Typer:
    """A root app with no commands yet."""
    new = typer.Typer(
        cls=GroupFlagsWithoutTypes,
        name="vault-agent",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain click help and usage errors: rich's formatter imports rich.markdown and
        # markdown-it, which would double the time `--help` takes.
        rich_markup_mode=None,
    )
    new.callback()(_root)
    return new


def flags_without_types(target: typer.Typer) -> None:
    """One place: flags show no "<bool>" in any --help."""
    from typer.core import TyperCommand

    for info in target.registered_commands:
        if info.cls is None or info.cls is TyperCommand:
            info.cls = FlagsWithoutTypes


app = root()


def load_local_commands() -> None:
    """Each command module adds its commands to `app` when imported (they import `app`)."""
    # The import order is the order of `vault-agent --help`: local, servers, then the rest.
    from vault_agent.cli import local  # noqa: F401, I001
    from vault_agent.cli import serve  # noqa: F401
    from vault_agent.cli import web  # noqa: F401
    from vault_agent.cli import conversations  # noqa: F401


def local_command_names() -> set[str]:
    """Names of the commands on `app` that are not built from the command table."""
    from vault_agent.cli.remote import GENERATED

    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    return names - GENERATED


def full_app() -> typer.Typer:
    """`app` with every command (built once)."""
    if not _loaded:
        from vault_agent.cli.remote import register_commands

        load_local_commands()
        register_commands(app, local_command_names())
        flags_without_types(app)
        _loaded.append(True)
    return app


_loaded: list[bool] = []
