"""Human output of `vault-agent query`, and its `--where` flag's parser (no pydantic here)."""

from __future__ import annotations

import json
import re
from typing import Any

from vault_agent.api.human.common import data_of

_WHERE = re.compile(r"^\s*(.+?)\s*(!=|<=|>=|=|<|>)\s*(.*?)\s*$", re.S)
_WORD_OP = re.compile(r"^\s*(.+?)\s+(in|contains|exists|missing)(?:\s+(.*?))?\s*$", re.S | re.I)


def _value(text: str) -> Any:
    """A flag value as JSON would type it: numbers, true/false/null, "quoted" text; else text."""
    raw = text.strip()
    if raw in ("true", "false", "null") or re.fullmatch(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", raw):
        return json.loads(raw)
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def parse_where(values: list[str]) -> list[dict[str, Any]]:
    """`--where 'status = active'`, `'priority>=3'`, `'status in draft,review'`,
    `'authors contains ann'`, `'due exists'` → vault_query's `where` conditions.

    Raises:
        ValueError: a condition without an operator (the CLI reports the flag).
    """
    out: list[dict[str, Any]] = []
    for text in values:
        word = _WORD_OP.match(str(text))
        if word is not None:
            field, op, rest = word.group(1), word.group(2).lower(), word.group(3) or ""
            if op in ("exists", "missing"):
                out.append({"field": field, "op": op})
            elif op == "in":
                out.append({"field": field, "op": op, "value": [_value(v) for v in rest.split(",")]})
            else:
                out.append({"field": field, "op": op, "value": _value(rest)})
            continue
        match = _WHERE.match(str(text))
        if match is None:
            raise ValueError("expected FIELD OP VALUE, e.g. 'status = active' or 'priority >= 3'")
        out.append({"field": match.group(1), "op": match.group(2), "value": _value(match.group(3))})
    return out


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_show(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return "-" if value is None else str(value)


def render_query(body: dict[str, Any]) -> str:
    d = data_of(body)
    out = []
    for r in d.get("results", []):
        line = f"{r['path']}  ({r.get('title')})"
        if r.get("tags"):
            line += "  #" + " #".join(r["tags"])
        out.append(line)
        for name, value in (r.get("properties") or {}).items():
            out.append(f"    {name}: {_show(value)}")
    total = d.get("total")
    shown = len(d.get("results", []))
    tail = f"{shown} of {total if total is not None else '?'} notes"
    if d.get("next_cursor"):
        tail += f"; next page: --cursor {d['next_cursor']}"
    return "\n".join([*out, tail]) if out else f"(no notes)  {tail}"
