"""The operation catalog: each ops module exports every operation it declares, the catalog
holds each exactly once, and nothing looks an operation up in a global table."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from vault_agent.api.operation import Catalog, Operation
from vault_agent.api.ops import CATALOG, retrieval

PKG = Path(__file__).resolve().parents[2] / "vault_agent"


def _ops_modules() -> list[ModuleType]:
    names = sorted(p.stem for p in (PKG / "api" / "ops").glob("*.py") if p.stem != "__init__")
    return [importlib.import_module(f"vault_agent.api.ops.{name}") for name in names]


def test_each_module_exports_every_operation_it_declares() -> None:
    for module in _ops_modules():
        declared = [value for value in vars(module).values() if isinstance(value, Operation)]
        exported = list(getattr(module, "OPERATIONS", ()))
        assert len(set(map(id, exported))) == len(exported), module.__name__
        assert {id(op) for op in declared} == {id(op) for op in exported}, module.__name__


def test_the_catalog_holds_every_exported_operation_once() -> None:
    exported = [op for module in _ops_modules() for op in getattr(module, "OPERATIONS", ())]
    assert len(CATALOG) == len(exported) >= 40
    assert {id(op) for op in CATALOG} == {id(op) for op in exported}
    assert len({op.name for op in CATALOG}) == len(CATALOG)
    assert len({op.mcp_name for op in CATALOG}) == len(CATALOG)


def test_lookup_by_name_is_for_names_from_outside() -> None:
    assert CATALOG.named("search") is retrieval.SEARCH
    assert [op.name for op in CATALOG.of_kind("write")] == [op.name for op in CATALOG if op.kind == "write"]
    with pytest.raises(KeyError):
        CATALOG.named("no-such-operation")


def test_a_name_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="search"):
        Catalog((retrieval.SEARCH, retrieval.SEARCH))
    extended = CATALOG.with_operations()
    assert extended.operations == CATALOG.operations and extended is not CATALOG


def test_no_global_table_of_operations() -> None:
    """Issue 34: operations are objects passed around, never looked up in a global registry."""
    sources = {p.relative_to(PKG).as_posix(): p.read_text(encoding="utf-8") for p in PKG.rglob("*.py")}
    assert [rel for rel, text in sources.items() if "REGISTRY" in text or "register(Operation" in text] == []
    assert not (PKG / "api" / "registry.py").exists()
