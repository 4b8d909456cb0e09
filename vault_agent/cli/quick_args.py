"""The quick path of a server-backed command: its usual arguments read without typer.

typer builds its parameters with pydantic adapters and click, which costs more than the
request itself. The common invocations (`search WORD --limit 5 --json`, `overview`,
`read PATH --start 3 --end 9`) are plain: positional arguments, `--flag value`,
`--flag=value`, switches. `parse` reads exactly those into the keyword arguments the typer
command function would receive, and returns None for anything else (`--help`, an unknown
or repeated flag, a value that starts with `-`, a number that is not plain digits, a
missing or extra argument), which typer then parses, with its usual help and errors.
tests/cli/test_quick_args.py checks, over generated command lines, that whenever `parse`
answers, typer gives the same keyword arguments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_agent.cli.command_spec import CommandSpec

# The options every server-backed command has (cli/common.py): flag → (parameter, kind).
COMMON_OPTIONS = {
    "--vault": ("vault", "path"),
    "--index-dir": ("index_dir", "path"),
    "--config": ("config", "path"),
    "--server": ("server", "str"),
    "--token": ("token", "str"),
}
COMMON_SWITCHES = {"--json": "json_out"}


def _value(kind: str, text: str) -> Any:
    """The value as the command function gets it, or None when typer should judge it.

    Numbers stay text, as typer gives them (cli/remote.py): the server judges them and
    names the flag in its error.
    """
    if not text or text.startswith("-"):
        return None
    if kind == "path":
        return Path(text)
    return text


def _defaults(spec: CommandSpec) -> dict[str, Any]:
    from vault_agent.cli.request import param_name

    kwargs: dict[str, Any] = {arg.name: None for arg in spec.args}
    for opt in spec.options:
        kwargs[param_name(opt.flag)] = False if opt.type == "bool" and not opt.multiple else None
    kwargs |= {name: None for name, _ in COMMON_OPTIONS.values()}
    kwargs |= {name: False for name in COMMON_SWITCHES.values()}
    return kwargs


def parse(spec: CommandSpec, argv: list[str]) -> dict[str, Any] | None:
    """The command function's keyword arguments, or None when typer must parse `argv`."""
    from vault_agent.cli.request import param_name

    kwargs = _defaults(spec)
    options = {opt.flag: opt for opt in spec.options}
    seen: set[str] = set()
    positional: list[str] = []
    rest = list(argv)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-"):
            positional.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        opt = options.get(flag)
        if flag in seen and not (opt is not None and opt.multiple):
            return None  # a repeated flag: typer decides which value wins
        seen.add(flag)
        if flag in COMMON_SWITCHES or (opt is not None and opt.type == "bool" and not opt.multiple):
            if has_inline:
                return None
            kwargs[COMMON_SWITCHES.get(flag) or param_name(flag)] = True
            continue
        if flag in COMMON_OPTIONS:
            name, kind = COMMON_OPTIONS[flag]
        elif opt is not None:
            name, kind = param_name(flag), opt.type
        else:
            return None  # --help, an unknown flag, `--`, `-`
        if not has_inline:
            if not rest:
                return None
            inline = rest.pop(0)
        value = _value(kind, inline)
        if value is None:
            return None
        if opt is not None and opt.multiple:
            kwargs[name] = [*(kwargs[name] or []), value]
        else:
            kwargs[name] = value
    if len(positional) > len(spec.args):
        return None
    for arg, text in zip(spec.args, positional, strict=False):
        value = _value(arg.type, text)
        if value is None:
            return None
        kwargs[arg.name] = value
    if not argv and spec.needs_args:
        return None  # typer prints the help of a bare command
    return kwargs
