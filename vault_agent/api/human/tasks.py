"""Human output of `vault-agent tasks` (no pydantic here)."""

from __future__ import annotations

from typing import Any

from vault_agent.api.human.common import data_of

_DATES = (("due", "📅"), ("scheduled", "⏳"), ("start", "🛫"), ("done", "✅"), ("cancelled", "❌"))


def false_value(_flag: object) -> bool:
    """`--not-recurring` and its kind: a switch that sends false."""
    return False


def _task_line(t: dict[str, Any]) -> str:
    parts = [f"[{t.get('status', ' ')}] {t.get('description', '')}"]
    parts += [f"{mark} {t[name]}" for name, mark in _DATES if t.get(name)]
    if t.get("priority"):
        parts.append(f"priority {t['priority']}")
    if t.get("recurrence"):
        parts.append(f"🔁 {t['recurrence']}")
    if t.get("invalidDates"):
        parts.append("invalid: " + ", ".join(t["invalidDates"]))
    return "  ".join(parts)


def _under_notes(tasks: list[dict[str, Any]], indent: str) -> list[str]:
    out: list[str] = []
    last = None
    for t in tasks:
        if t.get("path") != last:
            last = t.get("path")
            out.append(f"{indent}{last}")
        out.append(f"{indent}  {t.get('line')}: {_task_line(t)}")
    return out


def render_tasks(body: dict[str, Any]) -> str:
    """Tasks grouped under their note (`path:line` before each), a query's groups under
    their headings, then the counts."""
    d = data_of(body)
    out: list[str] = []
    if d.get("block"):
        b = d["block"]
        out.append(f"block {b.get('path')}#{b.get('index')} (line {b.get('line')})")
    out += _under_notes(d.get("results", []), "")
    for g in d.get("groups") or []:
        out.append("## " + " > ".join(g.get("names", [])) + f"  ({g.get('total')})")
        out += _under_notes(g.get("tasks", []), "")
    counts = d.get("counts") or {}
    tail = f"{len(d.get('results', []))} of {d.get('total')} tasks ({counts.get('open')} open, {counts.get('overdue')} overdue in the vault)"
    if d.get("next_cursor"):
        tail += f"; next page: --cursor {d['next_cursor']}"
    if d.get("matched") is not None:
        tail += f"; the query's filters matched {d['matched']}"
    return "\n".join([*out, tail]) if out else f"(no tasks)  {tail}"
