"""What every CLI command shares: the common options, settings, and the error runner.

The options are typer's; the rest lives in cli/running.py (no typer) and is re-exported.

The CLI is a composition root: it is one of the few places that read the environment.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

# Re-exported: the typer commands import them from here.
from vault_agent.cli.running import fail as fail
from vault_agent.cli.running import print_json as print_json
from vault_agent.cli.running import run_command as run_command
from vault_agent.cli.running import settings_from as settings_from

VaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--vault", help="Vault root (env VAULT_AGENT_VAULT; default: current directory).", show_default=False
    ),
]
IndexDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--index-dir",
        help="State dir (env VAULT_AGENT_INDEX_DIR; default: <vault>/.vault-agent).",
        show_default=False,
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", help="Config file (default: <vault>/.vault-agent/config.toml).", show_default=False
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the exact JSON body instead of human output.")]
ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--server",
        help="Server URL (env VAULT_AGENT_SERVER; default: the vault's running serve, else http://127.0.0.1:8765).",
        show_default=False,
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Bearer token (env VAULT_AGENT_TOKEN; default: <index-dir>/token).",
        show_default=False,
    ),
]


Options = TypeVar("Options")


def options_command(options: type[Options], run: Callable[[Options], None]) -> Callable[..., None]:
    """A typer command whose options are the fields of the dataclass `options` (each field's
    type is its `Annotated[..., typer.Option(...)]`, in --help order), calling `run` with the
    options built from the command line; its help is `run`'s docstring. Typer needs one
    parameter per option; the code gets one value."""
    hints = get_type_hints(options, include_extras=True)
    params = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[f.name], default=f.default)
        for f in dataclasses.fields(options)  # type: ignore[arg-type]
    ]

    def command(**given: Any) -> None:
        run(options(**given))

    command.__name__ = run.__name__
    command.__doc__ = run.__doc__
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return command
