"""Human output of `vault-agent base` (no pydantic here): bases, a base's views, a view's rows."""

from __future__ import annotations

import json
from typing import Any

from vault_agent.api.human.common import command, data_of


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_show(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return "-" if value is None else str(value)


def _views(base: dict[str, Any]) -> list[str]:
    if base.get("error"):
        return [f"    cannot be read: {base['error']}"]
    out = []
    for v in base.get("views") or []:
        runs = "" if v.get("runs") else "  (not supported)"
        out.append(f"    [{v['index']}] {v['name']}  ({v['type']}){runs}")
    return out


def _rows(d: dict[str, Any]) -> list[str]:
    columns = d.get("columns") or []
    groups = {g["index"]: g for g in d.get("groups") or []}
    out = [f"{d['base']['path']} › {d['view']['name']}" + (f"  (this: {d['this']})" if d.get("this") else "")]
    current = None
    for row in d.get("rows") or []:
        if row.get("group") is not None and row["group"] != current:
            current = row["group"]
            group = groups.get(current, {})
            out.append(f"  ── {_show(group.get('value'))} ({group.get('count', '?')})")
        values = row.get("values", {})
        cells = [f"{c['name']}: {_show(values.get(c['id']))}" for c in columns]
        out.append(f"  {row['path']}  " + "  ".join(cells))
    for prop, value in (d.get("summaries") or {}).items():
        out.append(f"  Σ {prop}: {_show(value)}")
    tail = f"{len(d.get('rows') or [])} of {d.get('total', '?')} rows"
    if d.get("next_cursor"):
        tail += f"; next page: --cursor {d['next_cursor']}"
    return [*out, tail]


def render_base(body: dict[str, Any]) -> str:
    d = data_of(body)
    if "rows" in d:
        return "\n".join(_rows(d))
    if "base" in d:
        base = d["base"]
        out = [f"{base['path']}", *_views(base)]
        for embed in base.get("embeds") or []:
            out.append(
                f"    embedded in {embed['note']}" + (f" (view {embed['view']})" if embed.get("view") else "")
            )
        if base.get("views"):
            out.append(f"run one: {command('base', base['path'], '--view', base['views'][0]['name'])}")
        return "\n".join(out)
    out = []
    for base in d.get("bases") or []:
        out += [base["path"], *_views(base)]
    tail = f"{len(d.get('bases') or [])} of {d.get('total', '?')} bases"
    if d.get("next_cursor"):
        tail += f"; next page: --cursor {d['next_cursor']}"
    return "\n".join([*out, tail]) if out else f"(no bases)  {tail}"
