"""Server-backed commands as typer commands, built from the generated command table.

One command per HTTP operation: its arguments and flags come from `cli/command_table.py`,
its request and output from `cli/request.py` (`execute`), which the quick path of
`cli/main.py` calls too.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from vault_agent.cli.command_spec import PY_TYPES, CommandSpec
from vault_agent.cli.command_table import COMMANDS
from vault_agent.cli.common import ConfigOpt, IndexDirOpt, JsonOpt, ServerOpt, TokenOpt, VaultOpt
from vault_agent.cli.request import execute, param_name
from vault_agent.cli.root import flags_without_types, root

# The command signatures are built at run time from the command table, so the
# annotations are values here, not types mypy could check.
_Annotated: Any = Annotated


def _signature(op: CommandSpec) -> inspect.Signature:
    params: list[inspect.Parameter] = []
    # Numbers are read as text and judged by the server, and a missing argument by
    # `execute`: the error then names the flag and the allowed range in our words, where
    # click would echo the value ("'abc' is not a valid integer").
    for arg in op.args:
        ann: Any = _Annotated[
            str | None,
            typer.Argument(help=arg.help, show_default=False, metavar=arg.name.upper()),
        ]
        params.append(
            inspect.Parameter(arg.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ann, default=None)
        )
    for opt in op.options:
        kind = PY_TYPES[opt.type] if opt.type == "bool" else str
        if kind is bool and not opt.multiple:
            ann = _Annotated[bool, typer.Option(opt.flag, help=opt.help)]
            default = False
        elif opt.multiple:
            ann = _Annotated[
                list.__class_getitem__(kind) | None, typer.Option(opt.flag, help=opt.help, show_default=False)
            ]
            default = None
        else:
            ann = _Annotated[kind | None, typer.Option(opt.flag, help=opt.help, show_default=False)]
            default = None
        params.append(
            inspect.Parameter(
                param_name(opt.flag), inspect.Parameter.KEYWORD_ONLY, annotation=ann, default=default
            )
        )
    for name, ann in (
        ("vault", VaultOpt),
        ("index_dir", IndexDirOpt),
        ("config", ConfigOpt),
        ("json_out", JsonOpt),
        ("server", ServerOpt),
        ("token", TokenOpt),
    ):
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=ann,
                default=False if name == "json_out" else None,
            )
        )
    return inspect.Signature(params)


def make_command(op: CommandSpec) -> Any:
    """The typer command function of one server-backed command."""

    def command(**kwargs: Any) -> None:
        execute(op, kwargs)

    command.__name__ = op.name.replace("-", "_")
    command.__signature__ = _signature(op)  # type: ignore[attr-defined]
    return command


def register_commands(target: typer.Typer, local_names: set[str]) -> None:
    """Add one command per entry of the command table that no local command already is."""
    for spec in COMMANDS.values():
        if spec.name not in local_names:
            _add(target, spec)


def _add(target: typer.Typer, spec: CommandSpec) -> None:
    target.command(name=spec.name, help=spec.help, no_args_is_help=spec.needs_args)(make_command(spec))


def single_command_app(spec: CommandSpec) -> typer.Typer:
    """A root app that holds only this command: what `vault-agent NAME ...` needs."""
    single = root()
    _add(single, spec)
    flags_without_types(single)
    return single
