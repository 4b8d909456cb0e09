"""`vault_search` (seed 002) with seed 003's context lines: line matches across notes.

Modes `regex` (default), `plain` and `loose` (query/grep_match.py). One result per
matching line, ordered by path then line.

Where the text comes from (docs/retrieval.md "vault_search"): the snapshot's chunk text
for notes unchanged since it, the disk for the rest (query/grep_sources.py). A snapshot
counts as current for a note when its freshness is `fresh`, or when the note's mtime and
size equal the snapshot's. Work stops at a time budget with partial results
(SEARCH_TIME_BUDGET).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from vault_agent.contracts import MAX_QUERY_CHARS, Outcome, WarningItem
from vault_agent.errors import (
    IndexIncompatible,
    IndexNotFound,
    InvalidParameter,
    empty_parameter,
    out_of_range,
    too_long_parameter,
)
from vault_agent.paging import decode_cursor, encode_cursor, fit, json_chars
from vault_agent.paths import Vault
from vault_agent.query.budget import Budget
from vault_agent.query.grep_match import SNIPPET_CHARS, Mode, make_matcher, snippet
from vault_agent.query.grep_sources import (
    Hit,
    changed_paths,
    disk_hits,
    iter_scope,
    read_lines,
    snapshot_hits,
)
from vault_agent.query.limits import MAX_CONTEXT_LINES, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT
from vault_agent.query.scope import resolve_scope
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.candidates import candidate_paths
from vault_agent.query.structured.filters import SearchFilters
from vault_agent.query.wire import Wire, omit_none

TIME_BUDGET_S = 10.0
# The JSON of one page's results stays within this many characters (next_cursor for the
# rest): at limit 500 an answer reached 93,707 characters (issue 23).
SEARCH_MAX_CHARS = 20_000


class SearchHit(Wire):
    path: str
    snippet: str
    # Seed 002's result is exactly {path, snippet}; the line number is an opt-in addition
    # (line_numbers, or context_lines > 0 where it places the context lines).
    line: int | None = omit_none()
    context_before: list[str] | None = omit_none()
    context_after: list[str] | None = omit_none()


class SearchData(Wire):
    results: list[SearchHit]
    # Where the next page starts (pass it as `cursor`); absent on the last page.
    next_cursor: str | None = omit_none()


def _with_context(vault: Vault, hits: list[SearchHit], n: int) -> None:
    cache: dict[str, list[str] | None] = {}
    for hit in hits:
        if hit.path not in cache:
            cache[hit.path] = read_lines(vault, hit.path)
        lines = cache[hit.path] or []
        i = (hit.line or 1) - 1
        hit.context_before = [x[:SNIPPET_CHARS] for x in lines[max(0, i - n) : i]]
        hit.context_after = [x[:SNIPPET_CHARS] for x in lines[i + 1 : i + 1 + n]]


@dataclass(frozen=True)
class GrepRequest:
    """vault_search's parameters: the pattern and its mode (regex, plain, loose), where to
    look (`relative_dir`, `glob`, the search filters), the page (`limit`, `cursor`), the
    lines around each match (`context_lines`), whether each says its line number, and the
    time budget."""

    query: str
    mode: Mode | None = None
    glob: str | None = None
    relative_dir: str | None = None
    limit: int | None = None
    context_lines: int | None = None
    line_numbers: bool = False
    cursor: str | None = None
    filters: SearchFilters | None = None
    time_budget_s: float = TIME_BUDGET_S


def vault_search(vault: Vault, reader: SnapshotReader, request: GrepRequest) -> Outcome[SearchData]:
    """Matching lines of notes, by path then line: one page of at most `limit` lines
    (default 50, max 500) and SEARCH_MAX_CHARS characters, `next_cursor` when more follow.

    Each result is seed 002's `{path, snippet}`; `line` is added with `line_numbers` or
    `context_lines` > 0 (then with `context_before` / `context_after`).

    With `filters` (tags, folder, modified_after/before), only the notes they select in the
    snapshot are searched (a note changed since is searched on disk when its snapshot row
    matched; one new since is not).

    Raises:
        InvalidParameter: empty or over-long query, bad mode/limit/context_lines/glob/cursor.
        InvalidPath, Forbidden, NotFound: a bad relative_dir.
        InvalidQuery: a malformed filter. IndexNotFound, IndexIncompatible: filters without a snapshot.
    """
    query, mode, limit, cursor, filters = (
        request.query, request.mode, request.limit, request.cursor, request.filters
    )  # fmt: skip
    if not isinstance(query, str) or not query.strip():
        raise empty_parameter("query")
    if len(query) > MAX_QUERY_CHARS:
        raise too_long_parameter("query", MAX_QUERY_CHARS)
    if "\x00" in query:
        raise InvalidParameter.about("query", "must not contain a NUL character")
    want = SEARCH_DEFAULT_LIMIT if limit is None else limit
    if not 1 <= want <= SEARCH_MAX_LIMIT:
        raise out_of_range("limit", 1, SEARCH_MAX_LIMIT)
    ctx_n = request.context_lines or 0
    if not 0 <= ctx_n <= MAX_CONTEXT_LINES:
        raise out_of_range("context_lines", 0, MAX_CONTEXT_LINES)
    if mode not in (None, "regex", "plain", "loose"):
        raise InvalidParameter.about("mode", "must be one of: regex, plain, loose")
    after = None if cursor is None else cast(tuple[str, int], decode_cursor(cursor, (str, int)))
    warnings: list[WarningItem] = []
    scope = resolve_scope(vault, request.relative_dir, request.glob)
    matcher = make_matcher(query, mode or "regex", warnings)
    budget = Budget(request.time_budget_s)
    hits: list[Hit] | None = None
    if reader is not None:
        try:
            with reader.acquire() as view:
                view.con.execute("SET parquet_metadata_cache = true").fetchall()  # session-local
                if filters is not None:
                    scope = scope.within(candidate_paths(reader, view, filters))
                changed, gone = (
                    ([], []) if view.freshness == "fresh" else changed_paths(vault, view.con, scope)
                )
                hits = snapshot_hits(view.con, matcher, scope, changed + gone, want + 1, budget, after)
                hits += disk_hits(vault, matcher, _from(changed, after), want + 1, budget, after)
        except (IndexNotFound, IndexIncompatible):
            if filters is not None:
                raise  # the filters are answered from the snapshot only
            hits = None
    if hits is None:
        hits = disk_hits(
            vault, matcher, _from(list(iter_scope(vault, scope)), after), want + 1, budget, after
        )
    hits.sort(key=lambda h: (h.path, h.line))
    out = [
        SearchHit(path=h.path, snippet=snippet(h.text, matcher, h.matched), line=h.line) for h in hits[:want]
    ]
    if ctx_n:
        _with_context(vault, out, ctx_n)
    shown = fit(out, SEARCH_MAX_CHARS, lambda hit: json_chars(hit.model_dump(mode="json")))
    more = shown < len(out) or len(hits) > want
    last = (out[shown - 1].path, out[shown - 1].line or 0) if more else None
    out = out[:shown]
    if not ctx_n and not request.line_numbers:
        for hit in out:
            hit.line = None
    if budget.hit:
        warnings.append(
            WarningItem(
                code="SEARCH_TIME_BUDGET",
                message="the search stopped at its time budget; "
                "results are partial: narrow with relative_dir or glob",
            )
        )
    elif more:
        why = f"{want} lines" if shown == want else f"the {SEARCH_MAX_CHARS:,}-character budget"
        warnings.append(
            WarningItem(
                code="RESULTS_TRUNCATED",
                message=f"more matching lines than this page holds ({why}); "
                "pass next_cursor as cursor for the next page, or narrow with relative_dir or glob",
            )
        )
    next_cursor = encode_cursor(*last) if last is not None else None
    return Outcome(data=SearchData(results=out, next_cursor=next_cursor), warnings=warnings)


def _from(paths: list[str], after: tuple[str, int] | None) -> list[str]:
    """The paths a page after `after` can still hold lines of."""
    return paths if after is None else [p for p in paths if p >= after[0]]
