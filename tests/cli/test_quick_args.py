"""The quick path reads a command line exactly as typer would, or leaves it to typer."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vault_agent.cli.command_table import COMMANDS
from vault_agent.cli.quick_args import COMMON_OPTIONS, COMMON_SWITCHES, parse
from vault_agent.cli.remote import _signature
from vault_agent.cli.root import flags_without_types, root

RUNNER = CliRunner()
CAPTURED: dict[str, Any] = {}


@cache
def _typer_app(name: str) -> Any:
    """A root holding only this command, whose function records its keyword arguments."""
    spec = COMMANDS[name]

    def capture(**kwargs: Any) -> None:
        CAPTURED.update(kwargs)

    capture.__name__ = name.replace("-", "_")
    capture.__signature__ = _signature(spec)  # type: ignore[attr-defined]
    app = root()
    app.command(name=name, help=spec.help, no_args_is_help=spec.needs_args)(capture)
    flags_without_types(app)
    return app


def typer_kwargs(name: str, argv: list[str]) -> dict[str, Any] | None:
    CAPTURED.clear()
    result = RUNNER.invoke(_typer_app(name), [name, *argv])
    return dict(CAPTURED) if result.exit_code == 0 else None


def typed(kwargs: dict[str, Any] | None) -> Any:
    """Values with their types: 5 and "5", a list and a tuple, must not compare equal."""
    return None if kwargs is None else {k: (type(v).__name__, repr(v)) for k, v in kwargs.items()}


VALUES = ["alpha", "notes/a b.md", "3", "07", "1.5", "-2", "", "1-3", "x=y", "-", "--", "é"]


def tokens(name: str) -> st.SearchStrategy[list[str]]:
    spec = COMMANDS[name]
    flags = [o.flag for o in spec.options] + list(COMMON_OPTIONS) + list(COMMON_SWITCHES)
    words = flags + [f + "=" + v for f in flags for v in ("3", "", "a")] + ["--help", "--bogus"] + VALUES
    return st.lists(st.sampled_from(words), max_size=7)


# Every command with its own options or arguments, at least once per kind.
NAMES = sorted(COMMANDS)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_quick_parse_agrees_with_typer(name: str, data: st.DataObject) -> None:
    argv = data.draw(tokens(name))
    quick = parse(COMMANDS[name], argv)
    if quick is not None:  # None: typer parses it, whatever it is
        assert typed(quick) == typed(typer_kwargs(name, argv)), argv


@pytest.mark.parametrize(
    "argv",
    [
        ["overview"],
        ["overview", "--json"],
        ["search", "lens cleaning", "--limit", "5", "--group", "note", "--json"],
        ["search", "--limit=5", "lens"],
        ["tags", "--limit", "3"],
        ["read", "notes/a.md", "--start", "1", "--end", "40"],
        ["coverage", "notes/a.md", "--range", "1-3", "--range", "5"],
        ["grep", "TODO", "--context", "2", "--server", "http://127.0.0.1:9", "--token", "t"],
        ["get", "notes/a.md", "--vault", "/tmp/v", "--index-dir", "/tmp/s", "--config", "/tmp/c.toml"],
        ["mv", "a.md", "b.md", "--dry-run"],
    ],
)
def test_usual_command_lines_take_the_quick_path(argv: list[str]) -> None:
    quick = parse(COMMANDS[argv[0]], argv[1:])
    assert quick is not None
    assert typed(quick) == typed(typer_kwargs(argv[0], argv[1:]))


@pytest.mark.parametrize(
    "argv",
    [
        ["search"],  # a missing argument: typer prints the help
        ["search", "--help"],
        ["search", "x", "--bogus"],
        ["search", "x", "--limit", "-1"],
        ["search", "x", "--limit", "1", "--limit", "2"],
        ["search", "x", "y"],
        ["search", "--", "-x"],
        ["overview", "--json=yes"],
    ],
)
def test_anything_unusual_is_left_to_typer(argv: list[str]) -> None:
    assert parse(COMMANDS[argv[0]], argv[1:]) is None
