"""Human output of `task set` (the changed line, the next occurrence, the diff) and its flags' converters."""

from __future__ import annotations

from typing import Any

from vault_agent.api.human.common import data_of


def render_task_update(body: Any) -> str:
    d = data_of(body)
    where = f"{d.get('path')}:{d.get('line')}" if d.get("line") is not None else str(d.get("path"))
    verb = "would change" if d.get("dry_run") else "changed" if d.get("changed") else "unchanged"
    out = [f"{where}: {verb} (status '{d.get('status')}', {str(d.get('status_type', '')).lower()})"]
    if d.get("removed"):
        out.append("the completed task's line is removed (🏁 delete)")
    following = d.get("next_occurrence")
    if following:
        out.append(f"next occurrence at line {following['line']}")
    if d.get("diff"):
        out.append(d["diff"].rstrip("\n"))
    if d.get("dry_run") and d.get("changed"):
        out.append("dry run: nothing was changed; add --apply to write it")
    return "\n".join(out)


def removed_value(_: object) -> str:
    """`--no-due`: the date is removed (the parameter's `none`)."""
    return "none"


def applied_value(_: object) -> bool:
    """`--apply`: `dry_run` false (without the flag the CLI sends `dry_run: true`)."""
    return False
