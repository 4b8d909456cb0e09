"""Compact human output of server-backed commands (the `--json` output is the HTTP body).

An operation's own `render` (declared with it in `api/ops/`) wins; otherwise the generic
renderer (scalars as `key: value`, lists of objects as aligned tables, `children` lists as
an indented tree).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_CELL = 60


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        text = ", ".join(_cell(v) for v in value)
    elif isinstance(value, dict):
        text = ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    else:
        text = str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    """Rows as an aligned text table with a header line; numbers right-aligned."""
    if not rows:
        return "(none)"
    cols = columns or [k for k in rows[0] if not isinstance(rows[0][k], list | dict)] or list(rows[0])
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    numeric = [
        all(isinstance(r.get(c), int | float) and not isinstance(r.get(c), bool) for r in rows) for c in cols
    ]

    def line(values: list[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(cols), *(line(row) for row in cells)])


def tree_lines(node: dict[str, Any], label: Callable[[dict[str, Any]], str], indent: int = 0) -> list[str]:
    """An indented tree of nodes with `children` lists."""
    lines = [("  " * indent) + label(node)]
    for child in node.get("children", []) or []:
        lines += tree_lines(child, label, indent + 1)
    return lines


def generic(value: Any, indent: int = 0) -> str:
    """Any JSON value as compact text."""
    pad = "  " * indent
    if isinstance(value, dict):
        if "children" in value and isinstance(value["children"], list):
            return "\n".join(
                tree_lines(value, lambda n: _cell({k: v for k, v in n.items() if k != "children"}))
            )
        out: list[str] = []
        for key, item in value.items():
            if isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
                out.append(f"{pad}{key}:")
                out += [pad + "  " + ln for ln in table(item).splitlines()]
            elif isinstance(item, dict):
                out.append(f"{pad}{key}:")
                out.append(generic(item, indent + 1))
            elif isinstance(item, list) and not item:
                out.append(f"{pad}{key}: (none)")
            else:
                out.append(f"{pad}{key}: {_cell(item) if isinstance(item, list) else item}")
        return "\n".join(out)
    if isinstance(value, list):
        if value and all(isinstance(i, dict) for i in value):
            return table(value)
        return "\n".join(pad + _cell(v) for v in value)
    return pad + str(value)


def render_body(envelope: bool, body: Any, own: Callable[[Any], str] | None = None) -> str:
    """Human text of one successful body (warnings are printed separately on stderr)."""
    if own is not None:
        return own(body)  # the operation's own renderer (api/ops), when it declares one
    if envelope and isinstance(body, dict):
        return generic(body.get("data"))
    return generic(body)
