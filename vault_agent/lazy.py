"""Deferred imports of core modules, so that a server-backed CLI command stays light.

The operation registry (names, params models, renderers) is imported by the CLI to build
its command table; the core functions it binds pull in DuckDB, pyarrow and the indexer.
`api/ops/*` therefore bind core functions through these stand-ins, which import the real
module on first use (a dict lookup afterwards). Type checkers see the real imports under
`TYPE_CHECKING`, which is also where the import-boundary test sees them: this is the one
module allowed to import our own modules by name at run time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


class LazyModule:
    """A module that is imported on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name}>"


def lazy_modules(package: str, *names: str) -> tuple[LazyModule, ...]:
    """`from package import a, b` for submodules, deferred until first use."""
    return tuple(LazyModule(f"{package}.{name}") for name in names)


def lazy_functions(module: str, *names: str) -> tuple[Callable[..., Any], ...]:
    """`from module import f, g` for functions, deferred until the first call."""

    def deferred(name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(importlib.import_module(module), name)(*args, **kwargs)

        call.__name__ = call.__qualname__ = name
        call.__module__ = module
        return call

    return tuple(deferred(name) for name in names)


def import_named(ref: str) -> Any:
    """The object a "package.module:Name" reference names, importing its module now."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)
