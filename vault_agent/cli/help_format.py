"""Help output: flags read as flags.

typer's rich help prints a type after every option, so a plain switch such as `--json`
or `--help` showed `<bool>` as if it took a value. Every command of the app uses this
command class, which blanks the type column of flags (options that take no value).
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup


def _blank_flag_types(params: list[Any]) -> list[Any]:
    for param in params:
        if getattr(param, "is_flag", False):
            param.metavar = ""  # rich help prints the metavar in place of the type
    return params


class FlagsWithoutTypes(TyperCommand):
    """A typer command whose help shows no `<bool>` after flags."""

    def get_params(self, ctx: Any) -> list[Any]:  # typer's own (vendored) click types
        return _blank_flag_types(super().get_params(ctx))


class GroupFlagsWithoutTypes(TyperGroup):
    """The app itself: its `--help` shows no `<bool>` either."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _blank_flag_types(super().get_params(ctx))
