"""The generated command table matches the catalog, and commands built from it match too."""

from __future__ import annotations

from pathlib import Path

from vault_agent.api.ops import CATALOG
from vault_agent.cli.app import local_app, local_command_names
from vault_agent.cli.command_table import COMMANDS
from vault_agent.cli.command_table_gen import TABLE_PATH, options_of, table_source

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_table_is_up_to_date() -> None:
    expected = table_source(CATALOG, local_command_names(local_app()))
    actual = (ROOT / TABLE_PATH).read_text(encoding="utf-8")
    assert actual == expected, "out of date: run ops/gen_cli_table.py"


def test_every_http_operation_is_a_command_once() -> None:
    local = local_command_names(local_app())
    http_ops = {op.name for op in CATALOG if not op.mcp_only and op.agent_tool}  # the person's: local
    assert set(COMMANDS) == http_ops - local
    assert not set(COMMANDS) & local


def test_each_entry_carries_the_operation_route_options_and_renderer() -> None:
    by_name = {op.name: op for op in CATALOG}
    for name, spec in COMMANDS.items():
        op = by_name[name]
        assert (spec.http_method, spec.http_path, spec.envelope) == (
            op.http_method,
            op.http_path,
            op.envelope,
        )
        assert [a.name for a in spec.args] == list(op.cli_args)
        assert [(o.flag, o.target, o.multiple) for o in spec.options] == [
            (o.flag, o.target, o.multiple) for o in options_of(op)
        ]
        assert spec.render is op.render
