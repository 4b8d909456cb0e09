"""Dead-code check: vulture over the package, the tests and ops, plus ops/vulture_whitelist.py.

Usage: .venv/bin/python ops/deadcode.py        (exit 1 and one line per finding when any)

A name counts as used when it is read anywhere in those trees, so a function only tests call
is alive (tests are its users); delete what is dead rather than whitelisting it. Two things
vulture cannot see are handled here, not name by name:
- a field declared in a class body (`name: type`, directly under `class`) is read by
  serialization (pydantic's model_dump and JSON schema, dataclasses.asdict, TypedDict), not
  by attribute access, so such declarations are not reported;
- functions registered by a decorator (typer commands and callbacks, pytest fixtures) or
  named as pytest hooks are called by their framework.
Everything else vulture cannot see used is named in ops/vulture_whitelist.py with the reason.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

from vulture import Vulture

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["vault_agent", "tests", "ops"]  # the whitelist is under ops/
IGNORE_DECORATORS = ["@*.command", "@*.callback", "@pytest.fixture"]
IGNORE_NAMES = ["pytest_*"]  # pytest hooks, called by name (tests/conftest.py)
MIN_CONFIDENCE = 60  # vulture's lowest: unused attributes, functions and class members


@cache
def field_lines(path: Path) -> frozenset[int]:
    """Lines of annotated declarations directly in a class body (data-model fields)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        stmt.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for stmt in node.body
        if isinstance(stmt, ast.AnnAssign)
    )


def findings() -> list[str]:
    scan = Vulture(ignore_names=IGNORE_NAMES, ignore_decorators=IGNORE_DECORATORS)
    scan.scavenge([str(ROOT / p) for p in PATHS])
    out = []
    for item in scan.get_unused_code(min_confidence=MIN_CONFIDENCE):
        path = Path(item.filename)
        if item.typ in ("variable", "attribute") and item.first_lineno in field_lines(path):
            continue
        out.append(item.get_report().replace(f"{ROOT}/", ""))
    return out


def main() -> int:
    found = findings()
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} dead-code finding(s): delete the code, or name it in ops/vulture_whitelist.py with why"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
