"""A root typer app with no commands: the name, help and `--version` every root shares.

`cli/app.py` builds the full app on one (local commands, servers, then the generated
server-backed commands); `cli/remote.py` builds a root that holds a single server-backed
command, so that `vault-agent search WORD` gets the same parsing, help and errors without
building the other commands (see `cli/main.py`). No command module imports a root back.
"""

from __future__ import annotations

from typing import Annotated

import typer
from typer.core import TyperCommand

from vault_agent.cli.help_format import FlagsWithoutTypes, GroupFlagsWithoutTypes
from vault_agent.cli.version import version_line

HELP = (
    "Index a Markdown vault and serve it to AI agents over CLI, HTTP and MCP.\n\n"
    "Start with: vault-agent index --vault PATH, then vault-agent serve --watch --vault PATH."
)


def _print_version(value: bool) -> None:
    if value:
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
    for info in target.registered_commands:
        if info.cls is None or info.cls is TyperCommand:
            info.cls = FlagsWithoutTypes
