#!/usr/bin/env python3
"""Regenerate vault_agent/cli/command_table.py from the operation catalog.

    python ops/gen_cli_table.py          # rewrite the table
    python ops/gen_cli_table.py --check  # exit 1 when it is out of date

Run it after changing an operation's name, route, params, CLI options, help or renderer.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vault_agent.api.ops import CATALOG  # noqa: E402
from vault_agent.cli.app import local_app, local_command_names  # noqa: E402
from vault_agent.cli.command_table_gen import TABLE_PATH, table_source  # noqa: E402


def main(argv: list[str]) -> int:
    path = ROOT / TABLE_PATH
    new = table_source(CATALOG, local_command_names(local_app()))
    if path.exists() and path.read_text(encoding="utf-8") == new:
        return 0
    if "--check" in argv:
        print(f"out of date (run ops/gen_cli_table.py): {TABLE_PATH}")
        return 1
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
