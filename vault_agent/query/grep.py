"""`vault_search` (seed 002) with seed 003's context lines: line matches across notes.

Modes: `regex` (default; RE2 syntax, run by DuckDB: linear time, so no pattern can
backtrack catastrophically; a pattern RE2 rejects falls back to `plain` with warning
REGEX_FALLBACK_PLAIN), `plain` (case-insensitive literal text), `loose` (NFKC + casefold
tokens incl. CJK bigrams: a line matches when it holds at least 60 % of the query's
distinct tokens). One result per matching line, ordered by path then line.

Where the text comes from (docs/retrieval.md "vault_search"): notes unchanged since the
committed snapshot are searched in the snapshot's stored chunk text (body lines; YAML
frontmatter and `%% comments %%` are not chunk text); notes changed since, and every
note when no usable snapshot exists, are read from disk (all lines). A snapshot counts
as current for a note when its freshness is `fresh`, or when the note's mtime and size
equal the snapshot's. Work stops at a time budget with partial results (SEARCH_TIME_BUDGET).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import duckdb
import pyarrow as pa

from vault_agent.contracts import MAX_QUERY_CHARS, Outcome, WarningItem
from vault_agent.errors import IndexIncompatible, IndexNotFound, InvalidParameter, InvalidPath, NotFound
from vault_agent.paths import Vault, display, normalize_rel_path
from vault_agent.query.globmatch import compile_glob, glob_sql_regex
from vault_agent.query.lines import decode, split_lines, strip_eol
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.toolkit import (
    MAX_CONTEXT_LINES,
    MAX_FILE_BYTES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    Wire,
    omit_none,
)
from vault_agent.text import tokenize

Mode = Literal["plain", "regex", "loose"]
SNIPPET_CHARS = 240
LOOSE_MIN_OVERLAP = 0.6
TIME_BUDGET_S = 10.0
DISK_BATCH_FILES = 2_000


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


@dataclass(frozen=True)
class Matcher:
    mode: Mode
    query: str
    pattern: str  # regex for RE2, the lowered query for plain
    tokens: frozenset[str]
    need: int

    def sql(self, col: str) -> tuple[str, list[Any]]:
        """SQL predicate over a line column and its parameters (regex/plain only)."""
        if self.mode == "regex":
            return f"regexp_matches({col}, ?)", [self.pattern]
        return f"regexp_matches({col}, ?, 'i')", [self.pattern]

    def loose_hit(self, line: str) -> bool:
        return len(self.tokens & set(tokenize(line))) >= self.need


def make_matcher(query: str, mode: Mode, warnings: list[WarningItem]) -> Matcher:
    """Validate the query for its mode; regex falls back to plain when RE2 rejects it."""
    if mode == "regex":
        try:
            duckdb.connect().execute("SELECT regexp_matches('', ?)", [query]).fetchall()
            return Matcher("regex", query, query, frozenset(), 0)
        except duckdb.Error:
            warnings.append(
                WarningItem(
                    code="REGEX_FALLBACK_PLAIN",
                    message="the pattern is not valid RE2 syntax (no lookaround or backreferences); "
                    "searched it as plain text",
                )
            )
            mode = "plain"
    if mode == "loose":
        toks = frozenset(tokenize(query))
        if toks:
            return Matcher("loose", query, "", toks, max(1, math.ceil(LOOSE_MIN_OVERLAP * len(toks))))
        mode = "plain"
    return Matcher("plain", query, literal(query), frozenset(), 0)


def literal(text: str) -> str:
    """An RE2 pattern matching `text` literally (\\Q…\\E quoting)."""
    return "\\Q" + text.replace("\\E", "\\E\\\\E\\Q") + "\\E"


def snippet(line: str, matcher: Matcher, matched: str | None = None) -> str:
    """At most SNIPPET_CHARS of the line, around the first match."""
    if len(line) <= SNIPPET_CHARS:
        return line
    pos = 0
    if matched:
        pos = max(0, line.find(matched))
    elif matcher.mode == "plain":
        pos = max(0, line.lower().find(matcher.query.lower()))
    elif matcher.mode == "loose":
        folded = line.casefold()
        hits = [folded.find(t) for t in matcher.tokens if t in folded]
        pos = min(hits) if hits else 0
    start = max(0, min(pos - SNIPPET_CHARS // 3, len(line) - SNIPPET_CHARS))
    out = line[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + out + ("…" if start + SNIPPET_CHARS < len(line) else "")


@dataclass
class Scope:
    prefix: str  # canonical folder, '' = whole vault
    glob: str | None

    def accepts(self, rel: str) -> bool:
        if self.prefix and not rel.startswith(self.prefix + "/"):
            return False
        match = compile_glob(self.glob)
        return match is None or match(rel)

    def sql(self) -> tuple[str, list[Any]]:
        parts, params = ["true"], []
        if self.prefix:
            parts.append("starts_with(path, ?)")
            params.append(self.prefix + "/")
        rx = glob_sql_regex(self.glob)
        if rx is not None:
            target = "regexp_extract(path, '[^/]*$')" if rx[1] else "path"
            parts.append(f"regexp_matches({target}, ?, 'i')")
            params.append(rx[0])
        return " AND ".join(parts), params


def resolve_scope(vault: Vault, relative_dir: str | None, glob: str | None) -> Scope:
    """Raises: InvalidPath, Forbidden, NotFound for a bad folder; InvalidParameter for a bad glob."""
    compile_glob(glob)
    rel = normalize_rel_path(relative_dir or "", allow_root=True)
    vault.check_not_protected(rel)
    if not rel:
        return Scope("", glob)
    resolved = vault.resolve(rel)
    if not resolved.is_dir:
        raise InvalidPath(f"'{display(resolved.rel)}' is a file, not a folder")
    return Scope(resolved.rel, glob)


@dataclass
class Hit:
    path: str
    line: int
    text: str
    matched: str | None = None


class Budget:
    """A wall-clock deadline; DuckDB queries are interrupted when it passes."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.hit = False

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def over(self) -> bool:
        if self.left() <= 0:
            self.hit = True
        return self.hit

    def run(self, con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """Run a query, interrupting it at the deadline (then: no rows, budget marked hit)."""
        left = self.left()
        if left <= 0:
            self.hit = True
            return []
        timer = threading.Timer(left, con.interrupt)
        timer.start()
        try:
            return con.execute(sql, params).fetchall()
        except duckdb.InterruptException:
            self.hit = True
            return []
        finally:
            timer.cancel()


def _lines_sql(source: str, where_chunk: str, line_pred: str, extra: str = "") -> str:
    return (
        f"SELECT path, start_line + i - 1 AS line_no, line {extra} FROM ("
        f"  SELECT path, start_line, unnest(parts) AS line, generate_subscripts(parts, 1) AS i FROM ("
        f"    SELECT path, start_line, string_split(text, chr(10)) AS parts FROM {source} WHERE {where_chunk}"
        f"  )"
        f") WHERE {line_pred}"
    )


def snapshot_hits(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, scope: Scope, skip: list[str], want: int, budget: Budget
) -> list[Hit]:
    """Hits from the snapshot's chunk text, for notes not in `skip`, in path/line order."""
    scope_sql, scope_params = scope.sql()
    where = f"{scope_sql} AND NOT list_contains(?::VARCHAR[], path)"
    params: list[Any] = [*scope_params, skip]
    if matcher.mode == "loose":
        return _snapshot_loose(con, matcher, where, params, want, budget)
    pred, pred_params = matcher.sql("line")
    chunk_pred, chunk_params = matcher.sql("text")
    if matcher.mode == "regex" and ("^" in matcher.pattern or "$" in matcher.pattern):
        chunk_params = ["(?m)" + matcher.pattern]  # line anchors inside multi-line chunk text
    extra = ", regexp_extract(line, ?) AS matched" if matcher.mode == "regex" else ", NULL AS matched"
    sql = _lines_sql("chunks", f"{where} AND {chunk_pred}", pred, extra)
    sql = f"SELECT DISTINCT ON (path, line_no) * FROM ({sql}) ORDER BY path, line_no LIMIT ?"
    all_params = ([matcher.pattern] if matcher.mode == "regex" else []) + params + chunk_params + pred_params
    rows = budget.run(con, sql, [*all_params, want])
    return [Hit(p, int(n), t, m) for p, n, t, m in rows]


def _snapshot_loose(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, where: str, params: list[Any], want: int, budget: Budget
) -> list[Hit]:
    sql = (
        "WITH cand AS (SELECT path, chunk_ordinal FROM terms WHERE term IN (SELECT unnest(?::VARCHAR[])) "
        "GROUP BY path, chunk_ordinal HAVING count(DISTINCT term) >= ?) "
        f"SELECT c.path, c.start_line, c.text FROM chunks c JOIN cand ON c.path = cand.path "
        f"AND c.ordinal = cand.chunk_ordinal WHERE {where.replace('path', 'c.path')} "
        "ORDER BY c.path, c.ordinal"
    )
    hits: list[Hit] = []
    seen: set[tuple[str, int]] = set()
    try:
        cursor = con.execute(sql, [sorted(matcher.tokens), matcher.need, *params])
        # Stream chunks in path order and stop once `want` lines matched: common tokens can
        # select most of the vault, and only the first lines in path order are needed.
        while len(hits) < want and not budget.over():
            batch = cursor.fetchmany(256)
            if not batch:
                break
            for path, start, text in batch:
                for i, line in enumerate(text.split("\n")):
                    key = (path, start + i)
                    if key not in seen and matcher.loose_hit(line):
                        seen.add(key)
                        hits.append(Hit(path, start + i, line))
    except duckdb.InterruptException:
        budget.hit = True
    hits.sort(key=lambda h: (h.path, h.line))
    return hits[:want]


def _read_lines(vault: Vault, rel: str) -> list[str] | None:
    try:
        raw = vault.read_bytes(vault.resolve(rel, match="exact"), MAX_FILE_BYTES + 1)
    except (NotFound, InvalidPath, OSError):
        return None
    if len(raw) > MAX_FILE_BYTES:
        return None
    return [strip_eol(x) for x in split_lines(decode(raw))]


def disk_hits(vault: Vault, matcher: Matcher, paths: list[str], want: int, budget: Budget) -> list[Hit]:
    """Hits read from the files themselves (sorted paths), stopping after `want` hits."""
    hits: list[Hit] = []
    con = duckdb.connect()
    for start in range(0, len(paths), DISK_BATCH_FILES):
        if len(hits) >= want or budget.over():
            break
        batch = paths[start : start + DISK_BATCH_FILES]
        cols: dict[str, list[Any]] = {"path": [], "line_no": [], "line": []}
        for rel in batch:
            lines = _read_lines(vault, rel)
            for i, line in enumerate(lines or []):
                if matcher.mode == "loose":
                    if matcher.loose_hit(line):
                        hits.append(Hit(rel, i + 1, line))
                    continue
                cols["path"].append(rel)
                cols["line_no"].append(i + 1)
                cols["line"].append(line)
        if matcher.mode != "loose" and cols["path"]:
            con.register("disk_lines", pa.table(cols))
            pred, pred_params = matcher.sql("line")
            extra = "regexp_extract(line, ?)" if matcher.mode == "regex" else "NULL"
            sql = f"SELECT path, line_no, line, {extra} FROM disk_lines WHERE {pred} ORDER BY path, line_no LIMIT ?"
            first = [matcher.pattern] if matcher.mode == "regex" else []
            rows = budget.run(con, sql, [*first, *pred_params, want - len(hits)])
            hits.extend(Hit(p, int(n), t, m) for p, n, t, m in rows)
            con.unregister("disk_lines")
    con.close()
    hits.sort(key=lambda h: (h.path, h.line))
    return hits[:want]


def _changed_paths(vault: Vault, con: duckdb.DuckDBPyConnection, scope: Scope) -> tuple[list[str], list[str]]:
    """(notes on disk that differ from or are missing in the snapshot, snapshot notes gone from disk)."""
    disk = {e.rel: (e.mtime_ns, e.size) for e in vault.walk() if scope.accepts(e.rel)}
    snap = {p: (m, s) for p, m, s in con.execute("SELECT path, mtime_ns, size FROM notes").fetchall()}
    changed = sorted(p for p, st in disk.items() if snap.get(p) != st)
    gone = sorted(p for p in snap if p not in disk)
    return changed, gone


def _with_context(vault: Vault, hits: list[SearchHit], n: int) -> None:
    cache: dict[str, list[str] | None] = {}
    for hit in hits:
        if hit.path not in cache:
            cache[hit.path] = _read_lines(vault, hit.path)
        lines = cache[hit.path] or []
        i = (hit.line or 1) - 1
        hit.context_before = [x[:SNIPPET_CHARS] for x in lines[max(0, i - n) : i]]
        hit.context_after = [x[:SNIPPET_CHARS] for x in lines[i + 1 : i + 1 + n]]


def _iter_scope(vault: Vault, scope: Scope) -> Iterator[str]:
    for entry in vault.walk():
        if scope.accepts(entry.rel):
            yield entry.rel


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
) -> Outcome[SearchData]:
    """Matching lines of notes, by path then line; at most `limit` (default 50, max 500).

    Each result is seed 002's `{path, snippet}`; `line` is added with `line_numbers` or
    `context_lines` > 0 (then with `context_before` / `context_after`).

    Raises:
        InvalidParameter: empty or over-long query, bad mode/limit/context_lines/glob.
        InvalidPath, Forbidden, NotFound: a bad relative_dir.
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
                changed, gone = (
                    ([], []) if view.freshness == "fresh" else _changed_paths(vault, view.con, scope)
                )
                hits = snapshot_hits(view.con, matcher, scope, changed + gone, want + 1, budget)
                hits += disk_hits(vault, matcher, changed, want + 1, budget)
        except (IndexNotFound, IndexIncompatible):
            hits = None
    if hits is None:
        hits = disk_hits(vault, matcher, list(_iter_scope(vault, scope)), want + 1, budget)
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
