"""vault_query on every surface: notes selected by tags, properties, dates, links, or DQL."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from vault_agent.api.human.query import parse_where, render_query
from vault_agent.api.operation import AppContext, CliOption, Operation, Params, defaults_to
from vault_agent.contracts import Outcome
from vault_agent.query.structured import filters, run, values
from vault_agent.query.structured.run import QUERY_LIMIT_DEFAULT, QueryData
from vault_agent.query.structured.run import QUERY_LIMIT_MAX as LIMIT_MAX


class WhereParams(Params):
    field: str
    op: str = Field(description="= != < <= > >= in contains exists missing")
    # Published as text (a portable schema has one type per field); JSON numbers, booleans
    # and lists are accepted too, and text that spells a number or true/false matches both.
    value: Annotated[Any, WithJsonSchema({"type": "string", "description": "in: a,b"})] = None


# Lengths and counts are checked by the core (filters.check_sizes), not declared here: every
# byte of this schema is paid in each agent session (docs/mcp.md, the 12,000-character list).
class QueryParams(Params):
    tags: list[str] | None = None
    any_tags: list[str] | None = None
    where: list[WhereParams] | None = None
    folder: str | None = None
    glob: str | None = None
    modified_after: str | None = None  # ISO date or 7d 2w 3mo ago: said once in the MCP instructions
    modified_before: str | None = None
    created_after: str | None = None
    created_before: str | None = None
    links_to: str | None = None
    linked_from: str | None = None
    sort: str | None = Field(default=None, description="mtime, -priority")
    limit: int | None = defaults_to(QUERY_LIMIT_DEFAULT, ge=1, le=LIMIT_MAX)
    cursor: str | None = None
    select: list[str] | None = None
    dql: str | None = Field(default=None, description="Dataview LIST/TABLE query, alone")


def _query(ctx: AppContext, p: QueryParams) -> Outcome[QueryData]:
    request = run.QueryRequest(
        filters=filters.Filters(
            tags=tuple(p.tags or ()),
            any_tags=tuple(p.any_tags or ()),
            where=tuple(filters.WhereItem(w.field, w.op, w.value) for w in p.where or ()),
            folder=p.folder,
            glob=p.glob,
            modified_after=p.modified_after,
            modified_before=p.modified_before,
            created_after=p.created_after,
            created_before=p.created_before,
            links_to=p.links_to,
            linked_from=p.linked_from,
            sort=p.sort,
            select=tuple(p.select or ()),
        ),
        dql=p.dql,
        limit=p.limit,
        cursor=p.cursor,
    )
    return run.vault_query(
        ctx.reader, request, cache=ctx.snapshot_cache, clock=ctx.clock or values.system_clock
    )


QUERY = Operation(
    name="query",
    mcp_name="vault_query",
    http_method="POST",
    http_both=True,
    http_path="/query",
    params=QueryParams,
    func=_query,
    description="Use it to list notes by tags, properties, dates, folder or links, or with Dataview.",
    title="Select notes",
    result=QueryData,
    cli_help="Select notes by tags, properties, dates or links. Example: vault-agent query --tag project "
    "--where 'status = active' --sort -mtime",
    cli_options=(
        CliOption(
            "--tag", "tags", help="Notes with this tag and its children (repeatable: all).", multiple=True
        ),
        CliOption(
            "--any-tag", "any_tags", help="Notes with at least one of these (repeatable).", multiple=True
        ),
        CliOption(
            "--where",
            "where",
            help="FIELD OP VALUE, e.g. 'status = active', 'priority >= 3', 'due exists' (repeatable).",
            multiple=True,
            convert=parse_where,
        ),
        CliOption("--folder", "folder", help="This folder and its subfolders."),
        CliOption("--glob", "glob", help="Path glob, e.g. '**/2024-*.md'."),
        CliOption("--since", "modified_after", help="Modified at or after: ISO date or 7d, 2w, 3mo, 1y."),
        CliOption("--modified-after", "modified_after", help="Same as --since."),
        CliOption("--modified-before", "modified_before", help="Modified before: ISO date or 7d, 2w."),
        CliOption("--created-after", "created_after", help="Created at or after."),
        CliOption("--created-before", "created_before", help="Created before."),
        CliOption("--links-to", "links_to", help="Notes linking to this note."),
        CliOption("--linked-from", "linked_from", help="Notes this note links to."),
        CliOption("--sort", "sort", help="path, title, mtime, ctime, size or a property; '-' descending."),
        CliOption("--limit", "limit", int, "Results per page, 1-500 (default 50)."),
        CliOption("--cursor", "cursor", help="next_cursor of the previous page."),
        CliOption("--select", "select", help="A property to show (repeatable).", multiple=True),
        CliOption("--dql", "dql", help="A Dataview query: LIST or TABLE … FROM … WHERE … SORT … LIMIT."),
    ),
    render=render_query,
)

OPERATIONS: tuple[Operation, ...] = (QUERY,)
