"""Per-note versioned contracts (seeds 001/004), returned raw on every surface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from vault_agent.api.registry import AppContext, Operation, Params, register
from vault_agent.contracts import Outcome
from vault_agent.lazy import lazy_modules

if TYPE_CHECKING:
    from vault_agent.query import outline, sections
else:  # the core is imported on first use (the CLI imports this module for the registry)
    outline, sections = lazy_modules("vault_agent.query", "outline", "sections")


class NotePathParams(Params):
    path: str = Field(
        description="Vault-relative note path with '/' separators, e.g. 'projects/alpha/plan.md'. "
        "Resolved case-insensitively when exactly one indexed note matches.",
        max_length=4096,
    )


_COMMON = (
    " Input: path (vault-relative note path; absolute, '..' above the root, NUL and non-note names fail "
    "with INVALID_PATH; protected folders with FORBIDDEN; a note that is not in the index with NOT_FOUND). "
    "Read from the last committed index snapshot: its freshness travels beside the result (MCP _meta "
    "indexFreshness and warnings, HTTP header X-Index-Freshness). Notes over 1,000,000 characters fail "
    "with TOO_LARGE; at most 500 headings are returned, then truncated is true. Never returns body text, "
    "snippets, full frontmatter, line ranges or absolute paths. INDEX_NOT_FOUND / INDEX_INCOMPATIBLE when "
    "there is no usable index."
)


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
        description=(
            "Get the heading outline of one Markdown note (contract knowtation.note_outline/v1, returned "
            "raw): {schema, path, title, headings: [{level 1-6, text (plain text), id "
            "'h{level}-{slug}-{ordinal:04d}'}], truncated}. Use it to see a note's structure before reading "
            "a part of it." + _COMMON
        ),
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
        description=(
            "Get one note's headings as a nested tree (contract knowtation.document_tree/v0, returned raw): "
            "{schema, path, title, root: {children}, truncated}; node {id, level, text, children}; the root "
            "is synthetic (no id, level or text) and a heading that skips a level nests under the nearest "
            "lower-level heading before it." + _COMMON
        ),
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
        description=(
            "Get body-free section metadata of one note (contract knowtation.section_source/v0, returned "
            "raw): {schema, path, title, sections, truncated, body_returned: false, snippet_returned: "
            "false}; section {section_id '{slug(path)}:{heading_id}', heading_id, level, heading_path "
            "(ancestor heading texts), heading_text, child_section_ids, body_available (content lies "
            "before the next heading of the same or a higher level)}. No section text is ever returned; "
            "read a section with vault_read." + _COMMON
        ),
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
        description=(
            "Get allowlisted frontmatter facets of one note (contract knowtation.metadata_facets/v0, "
            "returned raw): {schema, path, facets: {project, tags, date, updated, causal_chain_id, entity, "
            "episode_id}, inferred: {folder, source_type}, truncated}. Only these keys are read; project is "
            "a slug (from frontmatter, else from a projects/<slug>/ folder), dates are ISO strings or null, "
            "lists hold at most 100 values of at most 256 characters (then truncated is true); "
            "source_type is 'note' for every indexed Markdown note." + _COMMON
        ),
        cli_help="Allowlisted frontmatter facets of one note, e.g. vault-agent get-metadata-facets a.md.",
        render=render_metadata_facets,
    )
)
