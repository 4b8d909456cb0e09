"""Retrieval on every surface: ranked search, one note, related notes (index-backed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from vault_agent.api.human.retrieval import render_note, render_related, render_search
from vault_agent.api.registry import Operation, Params, register
from vault_agent.contracts import MAX_PATH_CHARS, MAX_QUERY_CHARS, RANKED_LIMIT_MAX
from vault_agent.errors import InvalidLimit
from vault_agent.lazy import lazy_modules

if TYPE_CHECKING:
    from vault_agent.query import note, related, search
else:  # the core is imported on first use (the CLI imports this module for the registry)
    note, related, search = lazy_modules("vault_agent.query", "note", "related", "search")


class SearchParams(Params):
    query: str = Field(alias="q", min_length=1, max_length=MAX_QUERY_CHARS)
    limit: int | None = Field(default=None, ge=1, le=RANKED_LIMIT_MAX, description="Default 10.")
    mode: Literal["lexical", "semantic", "hybrid"] | None = Field(
        default=None, description="Default hybrid when notes are embedded, else lexical."
    )
    group: Literal["chunk", "note"] | None = Field(default=None, description="note: best chunk per note.")
    # How each hit was ranked (the owner's web page, debugging). Left out of the published
    # MCP schema: every tools/list pays for it and agents do not need it; HTTP and the CLI
    # take it (docs/retrieval.md, "Explain").
    explain: SkipJsonSchema[bool | None] = Field(default=None, description="Add how each hit was ranked.")


class NoteParams(Params):
    path: str = Field(max_length=MAX_PATH_CHARS)
    max_chars: int | None = Field(default=None, ge=1, description="Default 20,000, max 100,000.")


class RelatedParams(Params):
    path: str = Field(max_length=MAX_PATH_CHARS)
    limit: int | None = Field(default=None, ge=1, le=RANKED_LIMIT_MAX, description="Default 10.")


register(
    Operation(
        name="search",
        mcp_name="search",
        http_method="GET",
        http_path="/search",
        params=SearchParams,
        func=lambda ctx, p: search.search(ctx.reader, p.query, p.limit, ctx.state, p.mode, p.group, p.explain),
        description="Passages ranked by relevance, by name, words and meaning; use it first for a topic or "
        "question (vault_search for exact words).",
        title="Ranked search",
        result="vault_agent.query.search:SearchData",
        cli_args=("query",),
        cli_help="Ranked search over the notes. Example: vault-agent search 'lens cleaning' --limit 5 --group note",
        limit_error=InvalidLimit,
        render=render_search,
    )
)

register(
    Operation(
        name="get",
        mcp_name="get_note",
        http_method="GET",
        http_path="/note",
        params=NoteParams,
        func=lambda ctx, p: note.get_note(ctx.reader, p.path, p.max_chars),
        description="A note's text with title, tags and headings; use it to read a short note whole.",
        title="Note with metadata",
        result="vault_agent.query.note:NoteData",
        cli_args=("path",),
        cli_help="Show one note with its metadata. Example: vault-agent get projects/plan.md",
        render=render_note,
    )
)

register(
    Operation(
        name="related",
        mcp_name="related",
        http_method="GET",
        http_path="/related",
        params=RelatedParams,
        func=lambda ctx, p: related.related(ctx.reader, p.path, p.limit, ctx.state),
        description="Notes linked to or from a note or sharing its tags; use it to explore around a note.",
        title="Related notes",
        result="vault_agent.query.related:RelatedData",
        cli_args=("path",),
        cli_help="Notes related to a note. Example: vault-agent related projects/plan.md --limit 5",
        limit_error=InvalidLimit,
        render=render_related,
    )
)
