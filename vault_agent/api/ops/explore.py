"""Seed 002 exploration tools on every surface: ls, read, find, scan, coverage, audit, grep.

Parameter names are seed 002's (snake_case for MCP, camelCase also accepted over HTTP);
payloads are seed 002's output schemas inside the {data, warnings} envelope.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from vault_agent.api.human.explore import parse_ranges, render_find, render_grep, render_ls, render_text
from vault_agent.api.operation import (
    AppContext,
    CliOption,
    LineRange,
    NoteName,
    Operation,
    Params,
    defaults_to,
)
from vault_agent.api.ops.retrieval import FILTER_OPTIONS, search_filters
from vault_agent.contracts import MAX_PATH_CHARS, MAX_QUERY_CHARS, Outcome
from vault_agent.query import audit, coverage, files, find, grep, scan
from vault_agent.query.audit import AuditData
from vault_agent.query.coverage import CoverageData
from vault_agent.query.files import LsData, ReadData
from vault_agent.query.find import FindData
from vault_agent.query.grep import SearchData
from vault_agent.query.limits import (
    COVERAGE_ANSWER_CHARS,
    FIND_DEFAULT_MAX_CANDIDATES,
    FIND_DEFAULT_TIME_MS,
    FIND_MAX_CANDIDATES_CAP,
    FIND_MAX_TIME_MS,
    LS_DEFAULT_LIMIT,
    LS_MAX_ENTRIES,
    MAX_CONTEXT_LINES,
    READ_ANSWER_CHARS,
    READ_DEFAULT_MAX_CHARS,
    SCAN_DEFAULT_CHUNK_LINES,
    SCAN_MAX_CHUNK_LINES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
)
from vault_agent.query.scan import ScanData


# ------------------------------------------------------------------------ vault_ls
class LsParams(Params):
    relative_dir: str | None = Field(default=None)
    glob: str | None = Field(default=None, description="case-insensitive, recursive")
    sort: Literal["name", "mtime"] | None = Field(default=None, description="mtime: newest first")
    limit: int | None = defaults_to(LS_DEFAULT_LIMIT, ge=1, le=LS_MAX_ENTRIES)
    cursor: str | None = Field(default=None)


def _ls(ctx: AppContext, p: LsParams) -> Outcome[LsData]:
    return files.vault_ls(ctx.vault, p.relative_dir, p.glob, p.sort, p.limit, p.cursor)


LS = Operation(
    name="ls",
    mcp_name="vault_ls",
    http_method="GET",
    http_path="/ls",
    params=LsParams,
    func=_ls,
    description="Use it for exact file names, or glob matches.",
    title="List folder",
    result=LsData,
    cli_args=("relative_dir",),
    cli_help="List a folder (direct children, or glob matches below it). Example: vault-agent ls projects",
    render=render_ls,
)


# ------------------------------------------------------------------------ vault_read
class ReadRange(Params):
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    start_char: int | None = Field(default=None, ge=0)


class ReadLimits(Params):
    max_chars: int | None = defaults_to(READ_DEFAULT_MAX_CHARS, ge=1)


class ReadParams(Params):
    path: NoteName = Field(max_length=MAX_PATH_CHARS)
    full: bool | None = Field(default=None, description="to the end; else range or section")
    range: ReadRange | None = Field(default=None)
    section_id: str | None = None
    heading: str | None = None
    limits: ReadLimits | None = Field(default=None)
    line_numbers: bool | None = Field(default=None)


def _read(ctx: AppContext, p: ReadParams) -> Outcome[ReadData]:
    r = p.range or ReadRange()
    request = files.ReadRequest(
        p.path,
        full=p.full,
        has_range=p.range is not None,
        start_line=r.start_line,
        end_line=r.end_line,
        start_char=r.start_char,
        max_chars=p.limits.max_chars if p.limits else None,
        line_numbers=bool(p.line_numbers),
        section_id=p.section_id,
        heading=p.heading,
    )
    return files.vault_read(ctx.vault, request, ctx.reader)


SECTION_OPTIONS = (
    CliOption("--section-id", "section_id", str, "One section by heading id (from get-note-outline)."),
    CliOption("--heading", "heading", str, "One section by heading text, or 'Parent > Heading'."),
)

READ = Operation(
    name="read",
    mcp_name="vault_read",
    http_method="GET",
    http_path="/read",
    params=ReadParams,
    func=_read,
    description="Use it once you have a path: lines or one section.",
    title="Read lines",
    result=ReadData,
    max_answer_chars=READ_ANSWER_CHARS,
    cli_args=("path",),
    cli_help="Read lines of a file. Example: vault-agent read notes/a.md --start 1 --end 40",
    cli_options=(
        CliOption("--start", "range.start_line", int, "First line (1-based)."),
        CliOption("--end", "range.end_line", int, "Last line (inclusive)."),
        CliOption("--max-chars", "limits.max_chars", int, "Character budget (default 20,000)."),
        CliOption("--full", "full", bool, "Read to the end of the file (no range needed)."),
        *SECTION_OPTIONS,
        CliOption("--line-numbers", "line_numbers", bool, "Prefix lines with their numbers."),
    ),
    render=render_text,
)


# ------------------------------------------------------------------------ vault_find
class FindScope(Params):
    relative_dir: str | None = Field(default=None)
    glob: str | None = Field(default=None)


class FindBudget(Params):
    max_candidates: int | None = defaults_to(FIND_DEFAULT_MAX_CANDIDATES, ge=1, le=FIND_MAX_CANDIDATES_CAP)
    time_ms: int | None = defaults_to(FIND_DEFAULT_TIME_MS, ge=1, le=FIND_MAX_TIME_MS)


class FindParams(Params):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    scope: FindScope | None = Field(default=None)
    budget: FindBudget | None = Field(default=None)


def _find(ctx: AppContext, p: FindParams) -> Outcome[FindData]:
    s = p.scope or FindScope()
    b = p.budget or FindBudget()
    request = find.FindRequest(p.query, s.relative_dir, s.glob, b.max_candidates, b.time_ms)
    return find.vault_find(ctx.vault, ctx.reader, request, ctx.snapshot_cache)


FIND = Operation(
    name="find",
    mcp_name="vault_find",
    http_method="GET",
    http_path="/find",
    params=FindParams,
    func=_find,
    description="Use it when search snippets are not enough.",
    title="Plan reads",
    result=FindData,
    long_running=True,
    cli_args=("query",),
    cli_help="Find where a query is answered and what to read next. Example: vault-agent find 'lens cleaning'",
    cli_options=(
        CliOption("--dir", "scope.relative_dir", str, "Only notes below this folder."),
        CliOption("--glob", "scope.glob", str, "Only notes matching this glob."),
        CliOption("--max-candidates", "budget.max_candidates", int, "Candidate cap (default 200)."),
        CliOption("--time-ms", "budget.time_ms", int, "Time budget in ms (default 60,000)."),
    ),
    render=render_find,
)


# ------------------------------------------------------------------------ vault_scan
class ScanCursor(Params):
    start_line: int | None = Field(default=None, ge=1)
    start_char: int | None = Field(default=None, ge=0)


class ScanParams(Params):
    path: NoteName = Field(max_length=MAX_PATH_CHARS)
    cursor: ScanCursor | None = Field(default=None)
    section_id: str | None = None
    heading: str | None = None
    chunk_lines: int | None = defaults_to(SCAN_DEFAULT_CHUNK_LINES, ge=1, le=SCAN_MAX_CHUNK_LINES)
    limits: ReadLimits | None = Field(default=None)


def _scan(ctx: AppContext, p: ScanParams) -> Outcome[ScanData]:
    c = p.cursor or ScanCursor()
    request = scan.ScanRequest(
        p.path,
        start_line=c.start_line,
        start_char=c.start_char,
        chunk_lines=p.chunk_lines,
        max_chars=p.limits.max_chars if p.limits else None,
        section_id=p.section_id,
        heading=p.heading,
    )
    return scan.vault_scan(ctx.vault, request, ctx.reader)


SCAN = Operation(
    name="scan",
    mcp_name="vault_scan",
    http_method="GET",
    http_path="/scan",
    params=ScanParams,
    func=_scan,
    description="Use it to read a long file whole, chunk by chunk.",
    title="Read in chunks",
    result=ScanData,
    max_answer_chars=READ_ANSWER_CHARS,
    cli_args=("path",),
    cli_help="Read a file in chunks. Example: vault-agent scan notes/a.md --cursor 201",
    cli_options=(
        CliOption("--cursor", "cursor.start_line", int, "First line of the chunk (default 1)."),
        CliOption("--chunk-lines", "chunk_lines", int, "Lines per chunk (default 200, max 1000)."),
        CliOption("--max-chars", "limits.max_chars", int, "Character budget (default 20,000)."),
        *SECTION_OPTIONS,
    ),
    render=render_text,
)


# ------------------------------------------------------------------------ vault_coverage
def _pairs(ranges: list[LineRange] | None) -> list[tuple[int, int]] | None:
    return None if ranges is None else [(r.start_line, r.end_line) for r in ranges]


class CoverageParams(Params):
    path: NoteName = Field(max_length=MAX_PATH_CHARS)
    cited_ranges: list[LineRange]


def _coverage(ctx: AppContext, p: CoverageParams) -> Outcome[CoverageData]:
    return coverage.vault_coverage(ctx.vault, p.path, _pairs(p.cited_ranges) or [], ctx.reader)


COVERAGE = Operation(
    name="coverage",
    mcp_name="vault_coverage",
    http_method="POST",
    http_path="/coverage",
    params=CoverageParams,
    func=_coverage,
    description="Use it before finishing a summary.",
    title="Citation coverage",
    result=CoverageData,
    max_answer_chars=COVERAGE_ANSWER_CHARS,
    kind="read",
    cli_args=("path",),
    cli_help="Coverage of a file by cited ranges. Example: vault-agent coverage notes/a.md --range 1-40",
    cli_options=(
        CliOption("--range", "cited_ranges", str, "A cited range a-b (repeatable).", True, parse_ranges),
    ),
)


# ------------------------------------------------------------------------ artifact_audit
class AuditParams(Params):
    artifact_path: NoteName = Field(description="file with [L12-L20] markers")
    source_path: NoteName
    cited_ranges: list[LineRange] | None = Field(default=None, description="default: its markers")


def _audit(ctx: AppContext, p: AuditParams) -> Outcome[AuditData]:
    cited = _pairs(p.cited_ranges)
    return audit.artifact_audit(
        ctx.vault, p.artifact_path, p.source_path, cited, ctx.audit_history, ctx.reader
    )


AUDIT = Operation(
    name="audit",
    mcp_name="artifact_audit",
    http_method="POST",
    http_path="/artifact-audit",
    params=AuditParams,
    func=_audit,
    description="Use it to check a summary's [L12-L20] citations.",
    title="Audit citations",
    result=AuditData,
    long_running=True,
    idempotent=False,
    cli_args=("artifact_path", "source_path"),
    cli_help="Audit an artifact's citations. Example: vault-agent audit summary.md notes/source.md",
    cli_options=(
        CliOption(
            "--range", "cited_ranges", str, "A cited source range a-b (repeatable).", True, parse_ranges
        ),
    ),
)


# ------------------------------------------------------------------------ vault_search
class GrepParams(Params):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    mode: Literal["regex", "plain", "loose"] | None = Field(default=None)
    glob: str | None = Field(default=None)
    relative_dir: str | None = Field(default=None)
    limit: int | None = defaults_to(SEARCH_DEFAULT_LIMIT, ge=1, le=SEARCH_MAX_LIMIT)
    context_lines: int | None = Field(default=None, ge=0, le=MAX_CONTEXT_LINES)
    line_numbers: bool | None = Field(default=None)
    cursor: str | None = Field(default=None)
    tags: list[str] | None = None  # search filters (vault_query's rules), from the snapshot
    folder: str | None = None
    modified_after: str | None = None
    modified_before: str | None = None


def _grep(ctx: AppContext, p: GrepParams) -> Outcome[SearchData]:
    request = grep.GrepRequest(
        p.query,
        mode=p.mode,
        glob=p.glob,
        relative_dir=p.relative_dir,
        limit=p.limit,
        context_lines=p.context_lines,
        line_numbers=bool(p.line_numbers),
        cursor=p.cursor,
        filters=search_filters(p),
    )
    return grep.vault_search(ctx.vault, ctx.reader, request)


GREP = Operation(
    name="grep",
    mcp_name="vault_search",
    http_method="GET",
    http_path="/grep",
    params=GrepParams,
    func=_grep,
    description="Use it for an exact name or pattern, line by line.",
    title="Line search",
    result=SearchData,
    long_running=True,
    cli_args=("query",),
    cli_help="Search note lines by regex or text. Example: vault-agent grep 'TODO|FIXME' --context 1",
    cli_options=(
        CliOption("--mode", "mode", str, "regex (default), plain or loose."),
        CliOption("--glob", "glob", str, "Only notes matching this glob."),
        CliOption("--dir", "relative_dir", str, "Only notes below this folder."),
        CliOption("--context", "context_lines", int, "Context lines before/after (0..10)."),
        CliOption("--limit", "limit", int, "Max results (default 50, max 500)."),
        CliOption("--cursor", "cursor", str, "Continue after a page (its next_cursor)."),
        CliOption(
            "--line-numbers",
            "line_numbers",
            bool,
            "Add each match's line number (on by default in human output).",
            human_default=True,
        ),
        *FILTER_OPTIONS,
    ),
    render=render_grep,
)

OPERATIONS: tuple[Operation, ...] = (LS, READ, FIND, SCAN, COVERAGE, AUDIT, GREP)
