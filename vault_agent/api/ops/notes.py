"""Per-note versioned contracts (seeds 001/004), returned raw on every surface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from vault_agent.api.registry import AppContext, Operation, Params, register
from vault_agent.contracts import Outcome
from vault_agent.lazy import lazy_modules
from vault_agent.query import models

if TYPE_CHECKING:
    from vault_agent.query import outline, sections
else:  # the core is imported on first use (the CLI imports this module for the registry)
    outline, sections = lazy_modules("vault_agent.query", "outline", "sections")


class NotePathParams(Params):
    path: str = Field(max_length=4096)


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


def _outline(ctx: AppContext, params: NotePathParams) -> Outcome[Any]:
    return outline.get_note_outline(ctx.reader, params.path)


def _document_tree(ctx: AppContext, params: NotePathParams) -> Outcome[Any]:
    return outline.get_document_tree(ctx.reader, params.path)


def _section_source(ctx: AppContext, params: NotePathParams) -> Outcome[Any]:
    return sections.get_section_source(ctx.reader, params.path)


def _metadata_facets(ctx: AppContext, params: NotePathParams) -> Outcome[Any]:
    return sections.get_metadata_facets(ctx.reader, params.path)


register(
    Operation(
        name="get-note-outline",
        mcp_name="get_note_outline",
        http_method="GET",
        http_path="/note-outline",
        params=NotePathParams,
        func=_outline,
        envelope=False,
        cli_args=("path",),
        description="A note's headings; use it to see its structure before reading part of it.",
        title="Note outline",
        result=models.NoteOutline,
        cli_help="Heading outline of one note, e.g. vault-agent get-note-outline notes/plan.md.",
        render=render_outline,
    )
)

register(
    Operation(
        name="get-document-tree",
        mcp_name="get_document_tree",
        http_method="GET",
        http_path="/document-tree",
        params=NotePathParams,
        func=_document_tree,
        envelope=False,
        cli_args=("path",),
        description="A note's headings as a nested tree; use it when parent headings matter.",
        title="Heading tree",
        result=models.DocumentTree,
        cli_help="Nested heading tree of one note, e.g. vault-agent get-document-tree notes/plan.md.",
        render=render_document_tree,
    )
)

register(
    Operation(
        name="get-section-source",
        mcp_name="get_section_source",
        http_method="GET",
        http_path="/section-source",
        params=NotePathParams,
        func=_section_source,
        envelope=False,
        cli_args=("path",),
        description="A note's sections (ids, heading paths), no text; use it to plan what to read.",
        title="Section map",
        result=models.SectionSource,
        cli_help="Body-free section metadata of one note, e.g. vault-agent get-section-source notes/plan.md.",
        render=render_section_source,
    )
)

register(
    Operation(
        name="get-metadata-facets",
        mcp_name="get_metadata_facets",
        http_method="GET",
        http_path="/metadata-facets",
        params=NotePathParams,
        func=_metadata_facets,
        envelope=False,
        cli_args=("path",),
        description="A note's key frontmatter and folder; use it to classify a note without reading it.",
        title="Note facets",
        result=models.MetadataFacets,
        cli_help="Allowlisted frontmatter facets of one note, e.g. vault-agent get-metadata-facets a.md.",
        render=render_metadata_facets,
    )
)
