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


def render_tasks(body: dict[str, Any]) -> str:
    """Tasks grouped under their note (`path:line` before each), then the counts."""
    d = data_of(body)
    out: list[str] = []
    last = None
    for t in d.get("results", []):
        if t.get("path") != last:
            last = t.get("path")
            out.append(str(last))
        out.append(f"  {t.get('line')}: {_task_line(t)}")
    counts = d.get("counts") or {}
    tail = f"{len(d.get('results', []))} of {d.get('total')} tasks ({counts.get('open')} open, {counts.get('overdue')} overdue in the vault)"
    if d.get("next_cursor"):
        tail += f"; next page: --cursor {d['next_cursor']}"
    return "\n".join([*out, tail]) if out else f"(no tasks)  {tail}"
