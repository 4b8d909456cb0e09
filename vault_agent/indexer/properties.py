"""Frontmatter fields → typed `props` rows (docs/query.md "What is indexed").

Each property keeps its YAML type so that `vault_query` compares numbers as numbers and
dates as dates. Names are Dataview's canonical form (`canonical_key`), so `Due Date` is
`due-date` and matching is case-insensitive. One row per scalar value or list item:

    kind      s (text)              n       d (µs UTC)        b
    string    the string            -       its date, if ISO  -
    number    repr                  value   -                 -
    boolean   true / false          -       -                 value
    date      2024-05-01            -       midnight UTC      -
    datetime  ISO (as written)      -       the instant       -
    null      -                     (a present key without a value)
    empty     -                     (an empty list)
    object    -                     (a map: its keys follow as `parent.child`, 3 levels)
    list      -                     (a list inside a list: not expanded)

A date or datetime without a time zone is read as UTC. Bounds keep a hostile block cheap
(values are shared YAML references; nothing is expanded beyond them): 100 items per list,
3 levels of maps, 256 rows per note. Two keys with the same canonical name: the first wins.
"""

from __future__ import annotations

from typing import Any

from vault_agent.property_values import canonical_key, typed_value

MAX_ITEMS = 100
MAX_DEPTH = 3
MAX_ROWS = 256


class _Rows:
    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.rows: list[dict[str, Any]] = []

    def full(self) -> bool:
        return len(self.rows) >= MAX_ROWS

    def add(
        self, key: str, item: int, is_list: bool, kind: str, typed: tuple[Any, ...] | None = None
    ) -> None:
        s, n, d, b = typed[1:] if typed is not None else (None, None, None, None)
        self.rows.append(
            {
                "path": self.rel,
                "key": key,
                "item": item,
                "is_list": is_list,
                "kind": kind,
                "s": s,
                "n": n,
                "d": d,
                "b": b,
            }
        )

    def value(self, key: str, value: Any, depth: int) -> None:
        if self.full():
            return
        if isinstance(value, dict):
            self.add(key, 0, False, "object")
            if depth < MAX_DEPTH:
                for name, child in list(value.items())[:MAX_ITEMS]:
                    self.value(f"{key}.{canonical_key(str(name))}", child, depth + 1)
            return
        if isinstance(value, list):
            if not value:
                self.add(key, 0, True, "empty")
            for i, item in enumerate(value[:MAX_ITEMS]):
                if self.full():
                    return
                if isinstance(item, dict):
                    self.add(key, i, True, "object")
                elif isinstance(item, list):
                    self.add(key, i, True, "list")
                else:
                    typed = typed_value(item)
                    self.add(key, i, True, typed[0], typed)
            return
        typed = typed_value(value)
        self.add(key, 0, False, typed[0], typed)


def property_rows(rel: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
    """The `props` rows of one note's frontmatter fields (file order)."""
    out = _Rows(rel)
    seen: set[str] = set()
    for name, value in fields.items():
        key = canonical_key(name)
        if not key or key in seen or out.full():
            continue
        seen.add(key)
        out.value(key, value, 1)
    return out.rows
