"""Retrieval on every surface: ranked search, one note, related notes (index-backed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from vault_agent.api.registry import Operation, Params, data_of, register
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


class NoteParams(Params):
    path: str = Field(max_length=MAX_PATH_CHARS)
    max_chars: int | None = Field(default=None, ge=1, description="Default 20,000, max 100,000.")


class RelatedParams(Params):
    path: str = Field(max_length=MAX_PATH_CHARS)
    limit: int | None = Field(default=None, ge=1, le=RANKED_LIMIT_MAX, description="Default 10.")


def render_search(body: dict[str, Any]) -> str:
    out = []
    for i, r in enumerate(data_of(body).get("results", []), 1):
        where = " > ".join(r.get("headingPath") or [])
        out.append(f"{i:>2}. {r['path']}:{r['startLine']}-{r['endLine']}  {r['score']:.3f}  {where}")
        out.append(f"    {r['snippet']}")
    return "\n".join(out) or "(no results)"


def render_note(body: dict[str, Any]) -> str:
    d = data_of(body)
    head = f"{d['path']}  ({d.get('title')})  tags: {', '.join(d.get('tags', [])) or '-'}"
    flag = "" if d.get("snapshotMatches") else "  [changed since the index]"
    tail = "\n-- truncated; read the rest with 'vault-agent read'" if d.get("truncated") else ""
    return head + flag + "\n\n" + str(d.get("text", "")).rstrip("\n") + tail


def render_related(body: dict[str, Any]) -> str:
    rows = data_of(body).get("related", [])
    return (
        "\n".join(f"{r['score']:>7.3f}  {r['path']}  ({', '.join(r['reasons'])})" for r in rows) or "(none)"
    )


register(
    Operation(
        name="search",
        mcp_name="search",
        http_method="GET",
        http_path="/search",
        params=SearchParams,
        func=lambda ctx, p: search.search(ctx.reader, p.query, p.limit, ctx.state, p.mode, p.group),
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
