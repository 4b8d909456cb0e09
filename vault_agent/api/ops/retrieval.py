"""Retrieval on every surface: ranked search, one note, related notes (index-backed)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vault_agent.api.registry import Operation, Params, register
from vault_agent.errors import InvalidLimit
from vault_agent.query import note, related, search

_INDEX_NOTE = (
    " Answers come from the last committed index snapshot; data.indexFreshness is its state and any state "
    "but fresh adds an INDEX_<STATE> warning. Errors: INDEX_NOT_FOUND (run 'vault-agent index'), "
    "INDEX_INCOMPATIBLE (run 'vault-agent reindex')."
)
_PATH_NOTE = (
    " path is a vault-relative note path (case-insensitive when one note matches); absolute, '..' above "
    "the root, NUL or non-note names fail with INVALID_PATH, protected folders with FORBIDDEN, unknown "
    "notes with NOT_FOUND."
)


def _data(body: dict[str, Any]) -> dict[str, Any]:
    return body.get("data", body) if isinstance(body, dict) else {}


class SearchParams(Params):
    query: str = Field(
        alias="q", min_length=1, max_length=1000, description="Search words in any language (HTTP: ?q=)."
    )
    limit: int | None = Field(default=None, ge=1, le=50, description="Results, 1–50 (default 10).")
    mode: Literal["lexical", "semantic", "hybrid"] | None = Field(
        default=None,
        description="lexical | semantic | hybrid (default hybrid when the index has embeddings, else "
        "lexical; semantic or hybrid without embeddings answers lexical with a SEMANTIC_UNAVAILABLE warning).",
    )
    group: Literal["chunk", "note"] | None = Field(
        default=None, description="chunk (default: every ranked chunk) | note (the best chunk per note)."
    )


class NoteParams(Params):
    path: str = Field(description="Vault-relative note path.", max_length=4096)
    max_chars: int | None = Field(
        default=None, ge=1, description="Text budget (default 20,000; max 100,000)."
    )


class RelatedParams(Params):
    path: str = Field(description="Vault-relative note path.", max_length=4096)
    limit: int | None = Field(default=None, ge=1, le=50, description="Results, 1–50 (default 10).")


def render_search(body: dict[str, Any]) -> str:
    out = []
    for i, r in enumerate(_data(body).get("results", []), 1):
        where = " > ".join(r.get("headingPath") or [])
        out.append(f"{i:>2}. {r['path']}:{r['startLine']}-{r['endLine']}  {r['score']:.3f}  {where}")
        out.append(f"    {r['snippet']}")
    return "\n".join(out) or "(no results)"


def render_note(body: dict[str, Any]) -> str:
    d = _data(body)
    head = f"{d['path']}  ({d.get('title')})  tags: {', '.join(d.get('tags', [])) or '-'}"
    flag = "" if d.get("snapshotMatches") else "  [changed since the index]"
    tail = "\n-- truncated; read the rest with 'vault-agent read'" if d.get("truncated") else ""
    return head + flag + "\n\n" + str(d.get("text", "")).rstrip("\n") + tail


def render_related(body: dict[str, Any]) -> str:
    rows = _data(body).get("related", [])
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
        description="Ranked search over heading-bounded chunks of the notes: fielded BM25 on a full-text "
        "engine (title, aliases, file name, folder, heading path, body; a note's name finds the note). "
        "Input: query (HTTP ?q=; words are NFKC/casefolded, CJK text matches by character bigrams), limit "
        "1–50 (default 10; else INVALID_LIMIT), mode lexical|semantic|hybrid, group chunk|note. Output: "
        "queryTerms, mode (the one answered), group, results [{path, title, headingPath, startLine, endLine, "
        "score, snippet (<= 240 chars)}] ordered by score, then path and chunk, indexFreshness." + _INDEX_NOTE,
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
        description="One note: its current text (default 20,000 characters, hard limit 100,000; truncated "
        "says when cut) and index metadata: title, tags, typeValues, statusValues (allowlisted frontmatter "
        "values), frontmatterFields (names only), headings [{id, level, text}] (outline ids), lineCount, "
        "inSnapshot, snapshotMatches (the file's sha256 equals the snapshot's), indexFreshness."
        + _PATH_NOTE
        + _INDEX_NOTE,
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
        description="Notes related to one note, each with its reasons: links_to / linked_from (resolved "
        "wikilinks, embeds and Markdown links, Obsidian-style), shared_tags (frontmatter tags in common) and "
        "term_overlap (BM25 of the note's most distinctive terms). Input: path, limit 1–50 (default 10; else "
        "INVALID_LIMIT). Output: path, related [{path, title, score, reasons, sharedTags}] by score then "
        "path, indexFreshness." + _PATH_NOTE + _INDEX_NOTE,
        cli_args=("path",),
        cli_help="Notes related to a note. Example: vault-agent related projects/plan.md --limit 5",
        limit_error=InvalidLimit,
        render=render_related,
    )
)
