"""The tables every name is looked up in: global functions, and methods by value type.

A method is found in its receiver's type table, then (for a link, an image, an icon or
html: Obsidian's values built on strings) in the string table applied to the value's
text, then among the methods of any value. Nothing else is reachable from an expression.
"""

from __future__ import annotations

from vault_agent.query.bases.builtins import Builtin, Table
from vault_agent.query.bases.functions_list import LIST_METHODS, OBJECT_METHODS
from vault_agent.query.bases.functions_text import REGEX_METHODS, STRING_METHODS
from vault_agent.query.bases.functions_types import (
    ANY_METHODS,
    DATE_METHODS,
    FILE_FIELDS,
    FILE_METHODS,
    LINK_METHODS,
    NUMBER_METHODS,
)
from vault_agent.query.bases.values import Value, to_text, type_name

METHODS: dict[str, Table] = {
    "string": STRING_METHODS,
    "number": NUMBER_METHODS,
    "list": LIST_METHODS,
    "object": OBJECT_METHODS,
    "date": DATE_METHODS,
    "link": LINK_METHODS,
    "file": FILE_METHODS,
    "regexp": REGEX_METHODS,
}
_TEXT_LIKE = frozenset(("link", "image", "icon", "html"))
METHOD_NAMES: frozenset[str] = frozenset(name for table in (*METHODS.values(), ANY_METHODS) for name in table)
FILE_FIELD_NAMES: frozenset[str] = frozenset(FILE_FIELDS)


def find_method(receiver: Value, name: str) -> tuple[Builtin, Value] | None:
    """The method `name` of this receiver and the value it runs on, or None."""
    kind = type_name(receiver)
    table = METHODS.get(kind)
    if table is not None and name in table:
        return table[name], receiver
    if kind in _TEXT_LIKE and name in STRING_METHODS:
        return STRING_METHODS[name], to_text(receiver)
    found = ANY_METHODS.get(name)
    return (found, receiver) if found is not None else None


def method_arity(name: str) -> tuple[int, int | None]:
    """The fewest and most arguments any type's method `name` takes (None: no most)."""
    builtins = [table[name] for table in (*METHODS.values(), ANY_METHODS) if name in table]
    lowest = min(b.min_args for b in builtins)
    most = None if any(b.max_args is None for b in builtins) else max(b.max_args or 0 for b in builtins)
    return lowest, most
