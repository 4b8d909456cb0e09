"""Human output of `rename-tag`: the totals, then each listed note with its diff."""

from __future__ import annotations

from typing import Any

from vault_agent.api.human.common import data_of


def render_rename_tag(body: Any) -> str:
    d = data_of(body)
    verb = "would rename" if d.get("dry_run") else "renamed"
    out = [
        f"#{d.get('old_tag')} -> #{d.get('new_tag')}: {verb} {d.get('occurrences_total', 0)} tag(s) "
        f"in {d.get('notes_total', 0)} note(s)"
    ]
    if d.get("merged"):
        out.append("merges into existing: " + ", ".join("#" + t for t in d.get("merged_tags") or []))
    for note in d.get("notes") or []:
        out.append(f"\n{note['path']} ({note['occurrences']})")
        if note.get("diff"):
            out.append(note["diff"].rstrip("\n"))
    for skip in d.get("skipped") or []:
        out.append(f"skipped {skip['path']}: {skip['reason']}")
    if d.get("next_cursor"):
        out.append(f"more: --cursor {d['next_cursor']}")
    if d.get("dry_run") and d.get("notes_total"):
        out.append("dry run: nothing was changed; add --apply to rename")
    return "\n".join(out)
