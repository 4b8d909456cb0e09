"""Seed 002 exploration tools on every surface: ls, read, find, scan, coverage, audit, grep.

Parameter names are seed 002's (snake_case for MCP, camelCase also accepted over HTTP);
payloads are seed 002's output schemas inside the {data, warnings} envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from vault_agent.api.registry import AppContext, CliOption, Operation, Params, data_of, register
from vault_agent.contracts import MAX_QUERY_CHARS, Outcome
from vault_agent.errors import InvalidParameter
from vault_agent.contracts import MAX_PATH_CHARS
from vault_agent.query.toolkit import SEARCH_MAX_LIMIT
from vault_agent.lazy import lazy_modules

if TYPE_CHECKING:
    from vault_agent.query import audit, coverage, files, find, grep, scan
else:  # the core is imported on first use (the CLI imports this module for the registry)
    audit, coverage, files, find, grep, scan = lazy_modules(
        "vault_agent.query", "audit", "coverage", "files", "find", "grep", "scan"
    )

_PATH_ERRORS = (
    " Paths are vault-relative with '/' (read case-insensitively when exactly one file matches); absolute "
    "paths, '..' above the root, NUL and symlinks fail with INVALID_PATH, protected folders (.obsidian, "
    ".git, .trash, .vault-agent, .smarthole) with FORBIDDEN, missing files with NOT_FOUND."
)
_ACTIONS = (
    " next_actions lists what to call next (first = recommended): type is the tool name or 'stop', "
    "params the minimal parameters."
)


# ------------------------------------------------------------------------ vault_ls
class LsParams(Params):
    relative_dir: str | None = Field(
        default=None, description="Folder to list ('' or omitted: the vault root)."
    )
    glob: str | None = Field(
        default=None,
        description="Case-insensitive glob; lists every match below the folder (e.g. '*.md', 'projects/**').",
    )
    sort: Literal["name", "mtime"] | None = Field(
        default=None, description="'name' (default) or 'mtime' (newest first)."
    )


def render_ls(body: dict[str, Any]) -> str:
    rows = data_of(body).get("entries", [])
    out = [f"{e['path']}/" if e["type"] == "dir" else f"{e['path']}  ({e['size_bytes']} bytes)" for e in rows]
    return "\n".join(out) or "(empty)"


register(
    Operation(
        name="ls",
        mcp_name="vault_ls",
        http_method="GET",
        http_path="/ls",
        params=LsParams,
        func=lambda ctx, p: files.vault_ls(ctx.vault, p.relative_dir, p.glob, p.sort),
        description="List a vault folder: entries {path, type file|dir, size_bytes (null for folders)}. "
        "Without glob: the folder's direct children; with glob: every match below it (case-insensitive). "
        "Sorted by path, or newest first with sort='mtime'. At most 1,000 entries (warning LS_TRUNCATED). "
        "Excluded and protected folders and symlinks are never listed. Reads the files directly (no index)."
        + _PATH_ERRORS,
        cli_args=("relative_dir",),
        cli_help="List a folder (direct children, or glob matches below it). Example: vault-agent ls projects",
        render=render_ls,
    )
)


# ------------------------------------------------------------------------ vault_read
class ReadRange(Params):
    start_line: int | None = Field(default=None, ge=1, description="First line (1-based; default 1).")
    end_line: int | None = Field(
        default=None, ge=1, description="Last line, inclusive (default: end of file)."
    )
    start_char: int | None = Field(
        default=None,
        ge=0,
        description="Offset inside start_line (only to continue a page cut inside a line).",
    )


class ReadLimits(Params):
    max_chars: int | None = Field(
        default=None, ge=1, description="Character budget (default 20,000; capped at 100,000)."
    )


class ReadParams(Params):
    path: str = Field(description="Vault-relative file path.", max_length=MAX_PATH_CHARS)
    full: bool | None = Field(
        default=None, description="Read to the end of the file; without it, range is required."
    )
    range: ReadRange | None = Field(default=None, description="Lines to read: {start_line, end_line}.")
    limits: ReadLimits | None = Field(default=None, description="{max_chars}: character budget.")
    line_numbers: bool | None = Field(default=None, description="Prefix each line with its number and a tab.")


def _read(ctx: AppContext, p: ReadParams) -> Outcome[Any]:
    r = p.range or ReadRange()
    return files.vault_read(
        ctx.vault,
        p.path,
        full=p.full,
        has_range=p.range is not None,
        start_line=r.start_line,
        end_line=r.end_line,
        start_char=r.start_char,
        max_chars=p.limits.max_chars if p.limits else None,
        line_numbers=bool(p.line_numbers),
    )


def render_text(body: dict[str, Any]) -> str:
    d = data_of(body)
    rng = d.get("applied_range", {})
    tail = f"\n-- lines {rng.get('start_line')}-{rng.get('end_line')}, {d.get('truncated_reason')}"
    nxt = d.get("next_offset") or d.get("next_cursor") or {}
    if nxt.get("start_line"):
        tail += f"; continue at line {nxt['start_line']}"
    return str(d.get("text", "")).rstrip("\n") + tail


register(
    Operation(
        name="read",
        mcp_name="vault_read",
        http_method="GET",
        http_path="/read",
        params=ReadParams,
        func=_read,
        description="Read lines of a vault file. Input: path, range {start_line, end_line} (required unless "
        "full=true), limits.max_chars (default 20,000, hard limit 100,000), line_numbers. Output: text (exact "
        "file text, line ends included), truncated, returned_chars, applied_range, next_offset.start_line "
        "(where to continue, null at the end), truncated_reason max_chars|range_end|hard_limit|none. Reads the "
        "current file (no index)." + _PATH_ERRORS,
        cli_args=("path",),
        cli_help="Read lines of a file. Example: vault-agent read notes/a.md --start 1 --end 40",
        cli_options=(
            CliOption("--start", "range.start_line", int, "First line (1-based)."),
            CliOption("--end", "range.end_line", int, "Last line (inclusive)."),
            CliOption("--max-chars", "limits.max_chars", int, "Character budget (default 20,000)."),
            CliOption("--full", "full", bool, "Read to the end of the file (no range needed)."),
            CliOption("--line-numbers", "line_numbers", bool, "Prefix lines with their numbers."),
        ),
        render=render_text,
    )
)


# ------------------------------------------------------------------------ vault_find
class FindScope(Params):
    relative_dir: str | None = Field(default=None, description="Only notes below this folder.")
    glob: str | None = Field(default=None, description="Only notes matching this case-insensitive glob.")


class FindBudget(Params):
    max_candidates: int | None = Field(default=None, ge=1, le=find.MAX_CANDIDATES_CAP, description="Default 200.")
    time_ms: int | None = Field(default=None, ge=1, le=find.MAX_TIME_MS, description="Default 60,000.")


class FindParams(Params):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to find (any language).")
    scope: FindScope | None = Field(default=None, description="{relative_dir, glob}.")
    budget: FindBudget | None = Field(default=None, description="{max_candidates, time_ms}.")


def _find(ctx: AppContext, p: FindParams) -> Outcome[Any]:
    s = p.scope or FindScope()
    b = p.budget or FindBudget()
    return find.vault_find(
        ctx.vault,
        ctx.reader,
        p.query,
        relative_dir=s.relative_dir,
        glob=s.glob,
        max_candidates=b.max_candidates,
        time_ms=b.time_ms,
        cache=ctx.state,
    )


register(
    Operation(
        name="find",
        mcp_name="vault_find",
        http_method="GET",
        http_path="/find",
        params=FindParams,
        func=_find,
        description="Staged find (seed 002): Stage 0 normalized match (NFKC, casefold), Stage 1 loose token "
        "match (words, CJK bigrams), Stage 1.5 integration into per-file line ranges. Input: query, scope "
        "{relative_dir, glob}, budget {max_candidates (200), time_ms (60,000)}. Output: trace_id, summary "
        "(scanned_files, scanned_nodes, candidates, warnings, max_stage_applied, scope_expanded, "
        "integrated_candidates, signal_coverage, file_bias_ratio, gap_ranges_count, sufficiency_score, "
        "integration_status ready|needs_followup|blocked, cutoff_reason only when cut off) and next_actions "
        "(vault_read with a range, vault_scan, or stop)." + _ACTIONS + " Uses the committed index snapshot "
        "(INDEX_NOT_FOUND without one; not fresh → INDEX_<STATE> warning).",
        cli_args=("query",),
        cli_help="Find where a query is answered and what to read next. Example: vault-agent find 'lens cleaning'",
        cli_options=(
            CliOption("--dir", "scope.relative_dir", str, "Only notes below this folder."),
            CliOption("--glob", "scope.glob", str, "Only notes matching this glob."),
            CliOption("--max-candidates", "budget.max_candidates", int, "Candidate cap (default 200)."),
            CliOption("--time-ms", "budget.time_ms", int, "Time budget in ms (default 60,000)."),
        ),
    )
)


# ------------------------------------------------------------------------ vault_scan
class ScanCursor(Params):
    start_line: int | None = Field(default=None, ge=1, description="First line of the chunk (default 1).")
    start_char: int | None = Field(
        default=None, ge=0, description="Offset inside start_line (from next_cursor)."
    )


class ScanParams(Params):
    path: str = Field(description="Vault-relative file path.", max_length=MAX_PATH_CHARS)
    cursor: ScanCursor | None = Field(default=None, description="{start_line}: where the chunk starts.")
    chunk_lines: int | None = Field(default=None, description="Lines per chunk: 1..1000 (default 200).")
    limits: ReadLimits | None = Field(default=None, description="{max_chars}: character budget per chunk.")


def _scan(ctx: AppContext, p: ScanParams) -> Outcome[Any]:
    c = p.cursor or ScanCursor()
    return scan.vault_scan(
        ctx.vault,
        p.path,
        start_line=c.start_line,
        start_char=c.start_char,
        chunk_lines=p.chunk_lines,
        max_chars=p.limits.max_chars if p.limits else None,
    )


register(
    Operation(
        name="scan",
        mcp_name="vault_scan",
        http_method="GET",
        http_path="/scan",
        params=ScanParams,
        func=_scan,
        description="Read a file chunk by chunk (seed 002). Input: path, cursor.start_line (default 1), "
        "chunk_lines (default 200, 1..1000), limits.max_chars (default 20,000, hard limit 100,000). Output: "
        "text, applied_range, next_cursor.start_line (null at the end), eof, truncated, truncated_reason "
        "max_chars|chunk_end|hard_limit|none, next_actions (vault_scan of the next chunk, or vault_coverage "
        "at the end)." + _ACTIONS + _PATH_ERRORS,
        cli_args=("path",),
        cli_help="Read a file in chunks. Example: vault-agent scan notes/a.md --cursor 201",
        cli_options=(
            CliOption("--cursor", "cursor.start_line", int, "First line of the chunk (default 1)."),
            CliOption("--chunk-lines", "chunk_lines", int, "Lines per chunk (default 200, max 1000)."),
            CliOption("--max-chars", "limits.max_chars", int, "Character budget (default 20,000)."),
        ),
        render=render_text,
    )
)


# ------------------------------------------------------------------------ vault_coverage
class CitedRange(Params):
    start_line: int = Field(description="First cited line (1-based).")
    end_line: int = Field(description="Last cited line (inclusive).")


def parse_ranges(values: list[str]) -> list[dict[str, int]]:
    """CLI `--range 12-20` (or `12`) values → cited_ranges objects."""
    out = []
    for value in values:
        a, _, b = str(value).partition("-")
        start, end = int(a.strip().lstrip("Ll")), int((b or a).strip().lstrip("Ll"))
        out.append({"start_line": start, "end_line": end})
    return out


def _pairs(ranges: list[CitedRange] | None) -> list[tuple[int, int]] | None:
    return None if ranges is None else [(r.start_line, r.end_line) for r in ranges]


class CoverageParams(Params):
    path: str = Field(description="Vault-relative file path.", max_length=MAX_PATH_CHARS)
    cited_ranges: list[CitedRange] = Field(
        description="Cited line ranges [{start_line, end_line}] (max 10,000)."
    )


register(
    Operation(
        name="coverage",
        mcp_name="vault_coverage",
        http_method="POST",
        http_path="/coverage",
        params=CoverageParams,
        func=lambda ctx, p: coverage.vault_coverage(ctx.vault, p.path, _pairs(p.cited_ranges) or []),
        description="Coverage of a file by cited line ranges (seed 002). Overlapping and adjacent ranges are "
        "merged and clipped to the file. Output: path, total_lines, covered_lines, coverage_ratio = covered / "
        "total (1.0 for an empty file), covered_ranges, uncovered_ranges, meets_min_coverage (ratio >= 0.8), "
        "next_actions (vault_scan of the first gap, artifact_audit, or stop)." + _ACTIONS + _PATH_ERRORS,
        kind="read",
        cli_args=("path",),
        cli_help="Coverage of a file by cited ranges. Example: vault-agent coverage notes/a.md --range 1-40",
        cli_options=(
            CliOption("--range", "cited_ranges", str, "A cited range a-b (repeatable).", True, parse_ranges),
        ),
    )
)


# ------------------------------------------------------------------------ artifact_audit
class AuditParams(Params):
    artifact_path: str = Field(description="The Markdown artifact (with [L12-L20] citation markers).")
    source_path: str = Field(description="The source file the artifact cites.")
    cited_ranges: list[CitedRange] | None = Field(
        default=None, description="Cited source ranges; default: the artifact's markers."
    )


register(
    Operation(
        name="audit",
        mcp_name="artifact_audit",
        http_method="POST",
        http_path="/artifact-audit",
        params=AuditParams,
        func=lambda ctx, p: audit.artifact_audit(
            ctx.vault, p.artifact_path, p.source_path, _pairs(p.cited_ranges), ctx.state
        ),
        description="Audit a Markdown artifact against its source (seed 002). Citations are markers [L12], "
        "[L12-L20] or [L3-L5, L9] on headings, list items or the lines under them; nodes are headings and list "
        "items (id n<line>). Output: rootless_nodes (no citation, no cited descendant), orphan_branches (cites "
        "lines past the source end), one_way_refs (shares no word with the lines it cites), coverage_ratio, "
        "uncovered_ranges_count, marginal_gain (vs the previous audit of the pair in this server; null first), "
        "needs_forced_full_scan, next_actions, findings {kind, message, node_id}." + _ACTIONS + _PATH_ERRORS,
        idempotent=False,
        cli_args=("artifact_path", "source_path"),
        cli_help="Audit an artifact's citations. Example: vault-agent audit summary.md notes/source.md",
        cli_options=(
            CliOption(
                "--range", "cited_ranges", str, "A cited source range a-b (repeatable).", True, parse_ranges
            ),
        ),
    )
)


# ------------------------------------------------------------------------ vault_search
class GrepParams(Params):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Pattern (RE2 regex by default) or text.")
    mode: Literal["regex", "plain", "loose"] | None = Field(
        default=None,
        description="regex (default; invalid → plain), plain (case-insensitive), loose (tokens).",
    )
    glob: str | None = Field(
        default=None, description="Case-insensitive glob over note paths, e.g. 'projects/**'."
    )
    relative_dir: str | None = Field(default=None, description="Only notes below this folder.")
    limit: int | None = Field(
        default=None, ge=1, le=SEARCH_MAX_LIMIT, description="Max matching lines (default 50, max 500)."
    )
    context_lines: int | None = Field(
        default=None, ge=0, le=grep.MAX_CONTEXT_LINES, description="Lines of context before/after (0..10); adds line."
    )
    line_numbers: bool | None = Field(
        default=None, description="Add each match's 1-based line number as 'line' (addition to seed 002)."
    )


def render_grep(body: dict[str, Any]) -> str:
    out = []
    for r in data_of(body).get("results", []):
        for i, line in enumerate(r.get("context_before") or []):
            out.append(f"{r['path']}-{r['line'] - len(r['context_before']) + i}- {line}")
        out.append(
            f"{r['path']}:{r['line']}: {r['snippet']}" if "line" in r else f"{r['path']}: {r['snippet']}"
        )
        for i, line in enumerate(r.get("context_after") or []):
            out.append(f"{r['path']}-{r['line'] + 1 + i}- {line}")
    return "\n".join(out) or "(no matches)"


def _grep(ctx: AppContext, p: GrepParams) -> Outcome[Any]:
    if not p.query.strip():
        raise InvalidParameter("parameter 'query' must be a non-empty string")
    return grep.vault_search(
        ctx.vault,
        ctx.reader,
        p.query,
        mode=p.mode,
        glob=p.glob,
        relative_dir=p.relative_dir,
        limit=p.limit,
        context_lines=p.context_lines,
        line_numbers=bool(p.line_numbers),
    )


register(
    Operation(
        name="grep",
        mcp_name="vault_search",
        http_method="GET",
        http_path="/grep",
        params=GrepParams,
        func=_grep,
        description="Search note lines (seed 002 vault_search). Input: query, mode regex (default; RE2 syntax, "
        "linear time; an invalid pattern is searched as plain text with warning REGEX_FALLBACK_PLAIN) | plain "
        "(case-insensitive) | loose (NFKC/casefold tokens, CJK bigrams, >= 60% of the query's tokens), glob "
        "(case-insensitive), relative_dir, limit (default 50, max 500), context_lines (0..10), line_numbers. Output: "
        "results [{path, snippet (<= 240 chars), line?, context_before?, context_after?}] by path then line "
        "(line with line_numbers or context_lines). Unchanged "
        "notes are searched in the index's stored body text, changed ones on disk; stops at a 10 s budget "
        "with partial results (SEARCH_TIME_BUDGET)." + _PATH_ERRORS,
        cli_args=("query",),
        cli_help="Search note lines by regex or text. Example: vault-agent grep 'TODO|FIXME' --context 1",
        cli_options=(
            CliOption("--mode", "mode", str, "regex (default), plain or loose."),
            CliOption("--glob", "glob", str, "Only notes matching this glob."),
            CliOption("--dir", "relative_dir", str, "Only notes below this folder."),
            CliOption("--context", "context_lines", int, "Context lines before/after (0..10)."),
            CliOption("--limit", "limit", int, "Max results (default 50, max 500)."),
            CliOption("--line-numbers", "line_numbers", bool, "Add each match's line number."),
        ),
        render=render_grep,
    )
)
