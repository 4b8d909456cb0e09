"""Per-note versioned contracts (seeds 001/004), returned raw on every surface."""

from __future__ import annotations

from pydantic import Field

from vault_agent.api.human.notes import (
    render_document_tree,
    render_metadata_facets,
    render_outline,
    render_section_source,
)
from vault_agent.api.operation import AppContext, NoteName, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.query import models, outline, sections


class NotePathParams(Params):
    path: NoteName = Field(max_length=4096)


def _outline(ctx: AppContext, params: NotePathParams) -> Outcome[models.NoteOutline]:
    return outline.get_note_outline(ctx.reader, params.path)


def _document_tree(ctx: AppContext, params: NotePathParams) -> Outcome[models.DocumentTree]:
    return outline.get_document_tree(ctx.reader, params.path)


def _section_source(ctx: AppContext, params: NotePathParams) -> Outcome[models.SectionSource]:
    return sections.get_section_source(ctx.reader, params.path)


def _metadata_facets(ctx: AppContext, params: NotePathParams) -> Outcome[models.MetadataFacets]:
    return sections.get_metadata_facets(ctx.reader, params.path)


GET_NOTE_OUTLINE = Operation(
    name="get-note-outline",
    mcp_name="get_note_outline",
    http_method="GET",
    http_path="/note-outline",
    params=NotePathParams,
    func=_outline,
    envelope=False,
    cli_args=("path",),
    description="Use it first on a note, then vault_read(path, section_id=id).",
    title="Note outline",
    max_answer_chars=80_000,  # seed 001's cap of 500 headings
    result=models.NoteOutline,
    cli_help="Heading outline of one note, e.g. vault-agent get-note-outline notes/plan.md.",
    render=render_outline,
)

GET_DOCUMENT_TREE = Operation(
    name="get-document-tree",
    mcp_name="get_document_tree",
    http_method="GET",
    http_path="/document-tree",
    params=NotePathParams,
    func=_document_tree,
    envelope=False,
    cli_args=("path",),
    description="Use it over get_note_outline when nesting matters.",
    title="Heading tree",
    max_answer_chars=90_000,  # seed 001's cap of 500 headings
    result=models.DocumentTree,
    cli_help="Nested heading tree of one note, e.g. vault-agent get-document-tree notes/plan.md.",
    render=render_document_tree,
)

GET_SECTION_SOURCE = Operation(
    name="get-section-source",
    mcp_name="get_section_source",
    http_method="GET",
    http_path="/section-source",
    params=NotePathParams,
    func=_section_source,
    envelope=False,
    cli_args=("path",),
    description="Use it to plan reading several sections.",
    title="Section map",
    max_answer_chars=250_000,  # seed 001's cap of 500 headings
    result=models.SectionSource,
    cli_help="Body-free section metadata of one note, e.g. vault-agent get-section-source notes/plan.md.",
    render=render_section_source,
)

GET_METADATA_FACETS = Operation(
    name="get-metadata-facets",
    mcp_name="get_metadata_facets",
    http_method="GET",
    http_path="/metadata-facets",
    params=NotePathParams,
    func=_metadata_facets,
    envelope=False,
    cli_args=("path",),
    description="Use it to classify a note without reading it.",
    title="Note facets",
    result=models.MetadataFacets,
    cli_help="Allowlisted frontmatter facets of one note, e.g. vault-agent get-metadata-facets a.md.",
    render=render_metadata_facets,
)

OPERATIONS: tuple[Operation, ...] = (
    GET_NOTE_OUTLINE,
    GET_DOCUMENT_TREE,
    GET_SECTION_SOURCE,
    GET_METADATA_FACETS,
)
