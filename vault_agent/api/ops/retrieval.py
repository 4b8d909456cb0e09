"""Retrieval on every surface: ranked search, one note, related notes (index-backed)."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from vault_agent.api.human.retrieval import render_note, render_related, render_search
from vault_agent.api.operation import AppContext, CliOption, NoteName, Operation, Params, defaults_to
from vault_agent.contracts import MAX_PATH_CHARS, MAX_QUERY_CHARS, RANKED_LIMIT_MAX, Outcome
from vault_agent.errors import InvalidLimit
from vault_agent.query import note, related, search
from vault_agent.query.limits import READ_ANSWER_CHARS
from vault_agent.query.note import NoteData
from vault_agent.query.related import RelatedData
from vault_agent.query.search import SearchData
from vault_agent.query.structured import filters


class SearchParams(Params):
    query: str = Field(alias="q", min_length=1, max_length=MAX_QUERY_CHARS)
    limit: int | None = defaults_to(10, ge=1, le=RANKED_LIMIT_MAX)
    mode: Literal["lexical", "semantic", "hybrid"] | None = None  # default: hybrid once notes are embedded
    group: Literal["chunk", "note"] | None = None  # note: the best chunk of each note (CLI --help)
    tags: list[str] | None = None  # search filters, applied before ranking (vault_query's rules)
    folder: str | None = None
    modified_after: str | None = None
    modified_before: str | None = None
    # How each hit was ranked (the owner's web page, debugging). Left out of the published
    # MCP schema: every tools/list pays for it and agents do not need it; HTTP and the CLI
    # take it (docs/retrieval.md, "Explain").
    explain: SkipJsonSchema[bool | None] = Field(default=None, description="Add how each hit was ranked.")


FILTER_OPTIONS = (
    CliOption(
        "--tag", "tags", help="Only notes with this tag or its children (repeatable: all).", multiple=True
    ),
    CliOption("--folder", "folder", help="Only notes in this folder and its subfolders."),
    CliOption("--since", "modified_after", help="Only notes modified at or after: ISO date or 7d, 2w, 3mo."),
    CliOption("--modified-after", "modified_after", help="Same as --since."),
    CliOption("--modified-before", "modified_before", help="Only notes modified before: ISO date or 7d."),
)


class FilterFields(Protocol):
    """The search filter fields of `search` and `vault_search` params (vault_query's rules)."""

    tags: list[str] | None
    folder: str | None
    modified_after: str | None
    modified_before: str | None


def search_filters(p: FilterFields) -> filters.SearchFilters | None:
    """The search filters of `search` / `vault_search` params (None: none given)."""
    if not (p.tags or p.folder is not None or p.modified_after or p.modified_before):
        return None
    return filters.SearchFilters(
        tags=tuple(p.tags or ()),
        folder=p.folder,
        modified_after=p.modified_after,
        modified_before=p.modified_before,
    )


def _search(ctx: AppContext, p: SearchParams) -> Outcome[SearchData]:
    request = search.SearchRequest(p.query, p.limit, p.mode, p.group, search_filters(p), p.explain)
    return search.search(ctx.reader, request)


def _get_note(ctx: AppContext, p: NoteParams) -> Outcome[NoteData]:
    return note.get_note(ctx.reader, p.path, p.max_chars, p.section_id, p.heading)


def _related(ctx: AppContext, p: RelatedParams) -> Outcome[RelatedData]:
    return related.related(ctx.reader, p.path, p.limit, ctx.snapshot_cache)


class NoteParams(Params):
    path: NoteName = Field(max_length=MAX_PATH_CHARS)
    max_chars: int | None = defaults_to(20_000, ge=1)
    section_id: str | None = None
    heading: str | None = None


class RelatedParams(Params):
    path: NoteName = Field(max_length=MAX_PATH_CHARS)
    limit: int | None = defaults_to(10, ge=1, le=RANKED_LIMIT_MAX)


SEARCH = Operation(
    name="search",
    mcp_name="search",
    http_method="GET",
    http_path="/search",
    params=SearchParams,
    func=_search,
    description="Use it first for a topic: passages by words and meaning.",
    title="Ranked search",
    result=SearchData,
    cli_args=("query",),
    cli_help="Ranked search over the notes. Example: vault-agent search 'lens cleaning' --limit 5 --group note",
    cli_options=(
        CliOption("--limit", "limit", int, "Default 10."),
        CliOption("--mode", "mode", str, "Default hybrid when notes are embedded, else lexical."),
        CliOption("--group", "group", str, "note: best chunk per note."),
        *FILTER_OPTIONS,
        CliOption("--explain", "explain", bool, "Add how each hit was ranked."),
    ),
    limit_error=InvalidLimit,
    render=render_search,
)

GET_NOTE = Operation(
    name="get",
    mcp_name="get_note",
    http_method="GET",
    http_path="/note",
    params=NoteParams,
    func=_get_note,
    description="Use it to read a short note whole, with tags and headings.",
    title="Read note",
    result=NoteData,
    max_answer_chars=READ_ANSWER_CHARS,
    cli_args=("path",),
    cli_help="Show one note with its metadata. Example: vault-agent get projects/plan.md",
    render=render_note,
)

RELATED = Operation(
    name="related",
    mcp_name="related",
    http_method="GET",
    http_path="/related",
    params=RelatedParams,
    func=_related,
    description="Use it to explore around a note: links, shared tags.",
    title="Related notes",
    result=RelatedData,
    cli_args=("path",),
    cli_help="Notes related to a note. Example: vault-agent related projects/plan.md --limit 5",
    limit_error=InvalidLimit,
    render=render_related,
)

OPERATIONS: tuple[Operation, ...] = (SEARCH, GET_NOTE, RELATED)
