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

from vault_agent.contracts import MAX_QUERY_CHARS, Outcome, WarningItem
from vault_agent.errors import IndexIncompatible, IndexNotFound, InvalidParameter
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
from vault_agent.query.scope import resolve_scope
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.candidates import candidate_paths
from vault_agent.query.structured.filters import Filters
from vault_agent.query.toolkit import (
    MAX_CONTEXT_LINES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    Wire,
    omit_none,
)

TIME_BUDGET_S = 10.0


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


def _with_context(vault: Vault, hits: list[SearchHit], n: int) -> None:
    cache: dict[str, list[str] | None] = {}
    for hit in hits:
        if hit.path not in cache:
            cache[hit.path] = read_lines(vault, hit.path)
        lines = cache[hit.path] or []
        i = (hit.line or 1) - 1
        hit.context_before = [x[:SNIPPET_CHARS] for x in lines[max(0, i - n) : i]]
        hit.context_after = [x[:SNIPPET_CHARS] for x in lines[i + 1 : i + 1 + n]]


def vault_search(
    vault: Vault,
    reader: SnapshotReader,
    query: str,
    *,
    mode: Mode | None = None,
    glob: str | None = None,
    relative_dir: str | None = None,
    limit: int | None = None,
    context_lines: int | None = None,
    line_numbers: bool = False,
    time_budget_s: float = TIME_BUDGET_S,
    filters: Filters | None = None,
) -> Outcome[SearchData]:
    """Matching lines of notes, by path then line; at most `limit` (default 50, max 500).

    Each result is seed 002's `{path, snippet}`; `line` is added with `line_numbers` or
    `context_lines` > 0 (then with `context_before` / `context_after`).

    With `filters` (tags, folder, modified_after/before), only the notes they select in the
    snapshot are searched (a note changed since is searched on disk when its snapshot row
    matched; one new since is not).

    Raises:
        InvalidParameter: empty or over-long query, bad mode/limit/context_lines/glob.
        InvalidPath, Forbidden, NotFound: a bad relative_dir.
        InvalidQuery: a malformed filter. IndexNotFound, IndexIncompatible: filters without a snapshot.
    """
    if not isinstance(query, str) or not query.strip():
        raise InvalidParameter("parameter 'query' must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS or "\x00" in query:
        raise InvalidParameter(f"parameter 'query' must be at most {MAX_QUERY_CHARS} characters without NUL")
    want = SEARCH_DEFAULT_LIMIT if limit is None else limit
    if not 1 <= want <= SEARCH_MAX_LIMIT:
        raise InvalidParameter(f"parameter 'limit' must be from 1 to {SEARCH_MAX_LIMIT}")
    ctx_n = context_lines or 0
    if not 0 <= ctx_n <= MAX_CONTEXT_LINES:
        raise InvalidParameter(f"parameter 'context_lines' must be from 0 to {MAX_CONTEXT_LINES}")
    if mode not in (None, "regex", "plain", "loose"):
        raise InvalidParameter("parameter 'mode' must be 'regex', 'plain' or 'loose'")
    warnings: list[WarningItem] = []
    scope = resolve_scope(vault, relative_dir, glob)
    matcher = make_matcher(query, mode or "regex", warnings)
    budget = Budget(time_budget_s)
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
                hits = snapshot_hits(view.con, matcher, scope, changed + gone, want + 1, budget)
                hits += disk_hits(vault, matcher, changed, want + 1, budget)
        except (IndexNotFound, IndexIncompatible):
            if filters is not None:
                raise  # the filters are answered from the snapshot only
            hits = None
    if hits is None:
        hits = disk_hits(vault, matcher, list(iter_scope(vault, scope)), want + 1, budget)
    hits.sort(key=lambda h: (h.path, h.line))
    if budget.hit:
        warnings.append(
            WarningItem(
                code="SEARCH_TIME_BUDGET",
                message="the search stopped at its time budget; "
                "results are partial: narrow with relative_dir or glob",
            )
        )
    elif len(hits) > want:
        warnings.append(
            WarningItem(
                code="RESULTS_TRUNCATED",
                message=f"more than {want} matching lines; "
                "raise limit (max 500) or narrow with relative_dir or glob",
            )
        )
    out = [
        SearchHit(path=h.path, snippet=snippet(h.text, matcher, h.matched), line=h.line) for h in hits[:want]
    ]
    if ctx_n:
        _with_context(vault, out, ctx_n)
    elif not line_numbers:
        for hit in out:
            hit.line = None
    return Outcome(data=SearchData(results=out), warnings=warnings)
