"""Human output of the write tools and `info`, and the parser of `--delete-lines A-B`."""

from __future__ import annotations

from typing import Any


def _lines(pairs: list[tuple[str, Any]]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in pairs if v is not None)


def render_write(body: Any) -> str:
    data = body.get("data", body) if isinstance(body, dict) else body
    d = data if isinstance(data, dict) else data.model_dump()
    keys: tuple[str, ...] = (
        "written_path",
        "path",
        "source",
        "destination",
        "deleted_path",
        "trashed_to",
        "method",
    )
    keys += ("written_bytes", "replacements", "size_bytes", "sha256", "files_moved", "links_total", "created")
    keys += ("snapshot_id", "dry_run")
    out = _lines([(k, d.get(k)) for k in keys])
    for item in d.get("links_updated") or []:
        out += f"\nlinks rewritten: {item['path']} ({item['links']})"
    if d.get("diff"):
        out += "\n" + d["diff"].rstrip("\n")
    return out


def render_info(body: Any) -> str:
    d = body.get("data", body) if isinstance(body, dict) else body.model_dump()
    keys = ("path", "type", "size_bytes", "entries", "created", "modified", "sha256")
    return _lines([(k, d.get(k)) for k in keys])


def line_range(value: str) -> dict[str, int]:
    start, _, end = value.partition("-")
    return {"start_line": int(start), "end_line": int(end or start)}
