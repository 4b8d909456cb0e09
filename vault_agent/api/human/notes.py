"""Human output of the per-note structure contracts (outline, tree, sections, facets)."""

from __future__ import annotations

from typing import Any


def _heading_lines(items: list[dict[str, Any]], depth: int, out: list[str]) -> None:
    for node in items:
        out.append(f"{'  ' * depth}{'#' * node['level']} {node['text']}  [{node['id']}]")
        _heading_lines(node.get("children", []), depth + 1, out)


def _header(body: dict[str, Any]) -> list[str]:
    title = body.get("title")
    return [f"{body.get('path', '')}" + (f"  ({title})" if title else "")]


def _trunc(body: dict[str, Any]) -> list[str]:
    return ["(truncated: only the first 500 headings)"] if body.get("truncated") else []


def render_outline(body: dict[str, Any]) -> str:
    """Human output of `get-note-outline`: headings indented by level."""
    out = _header(body)
    for h in body.get("headings", []):
        out.append(f"{'  ' * (h['level'] - 1)}{'#' * h['level']} {h['text']}  [{h['id']}]")
    if not body.get("headings"):
        out.append("(no headings)")
    return "\n".join(out + _trunc(body))


def render_document_tree(body: dict[str, Any]) -> str:
    """Human output of `get-document-tree`: the nested heading tree."""
    out = _header(body)
    _heading_lines(body.get("root", {}).get("children", []), 0, out)
    if len(out) == 1:
        out.append("(no headings)")
    return "\n".join(out + _trunc(body))


def render_section_source(body: dict[str, Any]) -> str:
    """Human output of `get-section-source`: sections with body availability."""
    out = _header(body)
    for s in body.get("sections", []):
        mark = "body" if s["body_available"] else "no body"
        kids = f", {len(s['child_section_ids'])} subsections" if s["child_section_ids"] else ""
        indent = "  " * len(s["heading_path"])
        out.append(f"{indent}{s['heading_text']}  [{s['section_id']}] ({mark}{kids})")
    if not body.get("sections"):
        out.append("(no sections)")
    return "\n".join(out + _trunc(body))


def render_metadata_facets(body: dict[str, Any]) -> str:
    """Human output of `get-metadata-facets`: one line per facet."""
    out = [body.get("path", "")]
    for key, value in body.get("facets", {}).items():
        text = ", ".join(value) if isinstance(value, list) else ("-" if value is None else str(value))
        out.append(f"  {key}: {text or '-'}")
    for key, value in body.get("inferred", {}).items():
        out.append(f"  inferred {key}: {value or '-'}")
    if body.get("truncated"):
        out.append("(truncated: some values were capped)")
    return "\n".join(out)
