"""Human output of ls, read, find, scan and grep, and the parser of `--range a-b` flags."""

from __future__ import annotations

import shlex
from typing import Any

from vault_agent.api.human.common import REQUEST_PARAMS, command, data_of


def _next_page(data: dict[str, Any]) -> list[str]:
    """The line that says how to get the next page of a paged listing."""
    cursor = data.get("next_cursor")
    return [f"-- more: add --cursor {shlex.quote(cursor)}"] if isinstance(cursor, str) else []


def render_ls(body: dict[str, Any]) -> str:
    data = data_of(body)
    rows = data.get("entries", [])
    out = [
        f"{e['path']}/  {e.get('mtime', '')}"
        if e["type"] == "dir"
        else f"{e['path']}  {e['size_bytes']} bytes  {e.get('mtime', '')}"
        for e in rows
    ]
    return "\n".join([*out, *_next_page(data)]) or "(empty)"


def render_text(body: dict[str, Any]) -> str:
    """Text of a read or a scan, then where it stopped and the command that continues it."""
    d = data_of(body)
    rng = d.get("applied_range", {})
    tail = f"\n-- lines {rng.get('start_line')}-{rng.get('end_line')}, {d.get('truncated_reason')}"
    nxt = d.get("next_offset") or d.get("next_cursor") or {}
    if nxt.get("start_line"):
        tail += f"; continue at line {nxt['start_line']}"
        if (again := _continue(d, int(nxt["start_line"]))) and not nxt.get("start_char"):
            tail += f": {again}"
    return str(d.get("text", "")).rstrip("\n") + tail


def _continue(data: dict[str, Any], line: int) -> str | None:
    """The read or scan that goes on from `line`, with the request's other flags."""
    asked = REQUEST_PARAMS.get() or {}
    path = asked.get("path")
    if not isinstance(path, str):
        return None
    limits = (
        ["--max-chars", asked["limits"]["max_chars"]] if (asked.get("limits") or {}).get("max_chars") else []
    )
    if "next_cursor" in data:  # a scan
        lines = ["--chunk-lines", asked["chunk_lines"]] if asked.get("chunk_lines") else []
        return command("scan", path, "--cursor", line, *lines, *limits)
    end = str((asked.get("range") or {}).get("end_line") or "")  # the CLI sends numbers as text
    rest = ["--end", end] if end.isdigit() and int(end) >= line else ["--full"]  # past the range: to the end
    return command("read", path, "--start", line, *rest, *limits)


def _action_line(action: dict[str, Any]) -> str:
    """One next action for people: where to read and the command that reads it."""
    params = action.get("params") or {}
    kind, path = action.get("type", ""), params.get("path")
    if kind == "stop" or not path:
        return "stop: enough was found" if kind == "stop" else kind
    rng = params.get("range") or {}
    start = rng.get("start_line") or (params.get("cursor") or {}).get("start_line")
    end = rng.get("end_line")
    if kind == "vault_read" and start and end:
        return f"{path} lines {start}-{end}  ({command('read', path, '--start', start, '--end', end)})"
    if kind == "vault_scan":
        return f"{path} from line {start or 1}  ({command('scan', path, '--cursor', start or 1)})"
    return f"{path}  ({kind})"


def render_find(body: dict[str, Any]) -> str:
    """Human output of `find`: the verdict, then each next action with its path and lines."""
    d = data_of(body)
    s = d.get("summary", {})
    cut = f", cut off: {s['cutoff_reason']}" if s.get("cutoff_reason") else ""
    head = (
        f"{s.get('integration_status')}: {s.get('integrated_candidates')} passages "
        f"from {s.get('scanned_files')} files{cut}"
    )
    actions = [f"{i}. {_action_line(a)}" for i, a in enumerate(d.get("next_actions", []), 1)]
    return "\n".join([head, "next:" if actions else "next: (none)", *actions])


def parse_ranges(values: list[str]) -> list[dict[str, int]]:
    """CLI `--range 12-20` (or `12`) values → cited_ranges objects."""
    out = []
    for value in values:
        a, _, b = str(value).partition("-")
        start, end = int(a.strip().lstrip("Ll")), int((b or a).strip().lstrip("Ll"))
        out.append({"start_line": start, "end_line": end})
    return out


def render_grep(body: dict[str, Any]) -> str:
    out = []
    for r in data_of(body).get("results", []):
        for i, line in enumerate(r.get("context_before") or []):
            out.append(f"{r['path']}-{r['line'] - len(r['context_before']) + i}- {line}")
        out.append(
            f"{r['path']}:{r['line']}: {r['snippet']}" if "line" in r else f"{r['path']}: {r['snippet']}"
        )
        for i, line in enumerate(r.get("context_after") or []):
            out.append(f"{r['path']}-{r['line'] + 1 + i}- {line}")
    return "\n".join([*out, *_next_page(data_of(body))]) or "(no matches)"
