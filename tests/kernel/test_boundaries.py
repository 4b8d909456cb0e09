"""Import boundaries (STYLE.md habit 5), enforced by walking the package's ASTs."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "vault_agent"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules() -> list[tuple[str, set[str]]]:
    return [(p.relative_to(PKG).as_posix(), _imports(p)) for p in sorted(PKG.rglob("*.py"))]


def _violations(pred_file, pred_import) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{f}: {name}" for f, names in _modules() if pred_file(f) for name in names if pred_import(name)]


def test_query_never_imports_indexer_api_or_cli() -> None:
    bad = ("vault_agent.indexer", "vault_agent.api", "vault_agent.cli")
    assert _violations(lambda f: f.startswith("query/"), lambda n: n.startswith(bad)) == []


def test_only_api_imports_aiohttp_and_mcp() -> None:
    def outside_api(f: str) -> bool:
        return not f.startswith(("api/", "cli/"))

    assert _violations(outside_api, lambda n: n.split(".")[0] in ("aiohttp", "mcp")) == []


def test_only_cli_imports_typer() -> None:
    assert _violations(lambda f: not f.startswith("cli/"), lambda n: n.split(".")[0] == "typer") == []


def test_only_the_watcher_imports_watchdog() -> None:
    assert _violations(lambda f: f != "indexer/watcher.py", lambda n: n.split(".")[0] == "watchdog") == []


def test_kernel_imports_no_layer() -> None:
    kernel = {"config.py", "errors.py", "paths.py", "contracts.py", "text.py", "freshness.py"}
    layers = ("vault_agent.indexer", "vault_agent.query", "vault_agent.api", "vault_agent.cli")
    assert _violations(lambda f: f in kernel, lambda n: n.startswith(layers)) == []
