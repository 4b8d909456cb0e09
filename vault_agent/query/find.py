"""`vault_find` (seed 002): staged find over the snapshot's chunks, then integration.

Stage 0 (normalized match): chunks whose text, NFKC + casefolded with whitespace
  collapsed, contains the query normalized the same way.
Stage 1 (loose match): the chunks `search` ranks best for the query (find_rank.py: the
  same engine and fields, hybrid once embeddings exist), in scope, holding at least 60 %
  of the query's token weight in their text, heading path or note name (else the best
  three with 30 %). Common tokens and CJK function bigrams weigh 0.25.
Stage 1.5 (integration): candidates (Stage 0 first, then by search rank) are cut to
  max_candidates; the candidates of the three best-ranked files are merged per file into
  line ranges (overlapping/adjacent spans).
Summary formulas (n = integrated_candidates, ranges per file r_f):
  file_bias_ratio    = max_f r_f / n                       (0 when n = 0)
  gap_ranges_count   = Σ_f (r_f − 1): gaps between integrated ranges of the same file
  signal_coverage.normalized = ranges holding a Stage 0 hit / n
  signal_coverage.loose      = query token weight seen in any candidate / query token weight
  sufficiency_score  = 0.6 · strength + 0.4 · signal_coverage.loose, strength = 1 with a
                       Stage 0 hit, else the best Stage 1 overlap (0 when n = 0); in a
                       hybrid answer whose first chunk both rankers put first (or whose
                       note the query names: search_modes.lead_agreed) at least 0.9
                       (AGREED_SUFFICIENCY): that agreement is sufficient evidence by
                       itself, whatever share of the query's words the note holds
  integration_status = blocked (n = 0) | ready (sufficiency ≥ 0.8, no gaps, n ≤ 3, every
                       range ≤ 200 lines) | needs_followup
  max_stage_applied  = 0 (Stage 1 not run) | 1 (nothing to integrate) | 1.5
next_actions: ready → vault_read of each range (≤ 3, best-ranked first) then stop;
needs_followup → vault_scan of the file with most ranges (then most lines, then path),
vault_read of the strongest range (Stage 0 first, then search rank); blocked → stop.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import duckdb

from vault_agent.contracts import MAX_QUERY_CHARS, Manifest, Outcome, WarningItem
from vault_agent.errors import empty_parameter, out_of_range, too_long_parameter
from vault_agent.paths import Vault
from vault_agent.query.budget import Budget
from vault_agent.query.find_postings import chunks_with_all
from vault_agent.query.find_rank import Ranked, chunks_of_notes, ranked_candidates, weighted_share
from vault_agent.query.limits import (
    FIND_DEFAULT_MAX_CANDIDATES,
    FIND_DEFAULT_TIME_MS,
    FIND_MAX_CANDIDATES_CAP,
    FIND_MAX_TIME_MS,
)
from vault_agent.query.postings import dead_paths, postings_index
from vault_agent.query.scope import Scope, resolve_scope
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.wire import NextAction, Wire, action, omit_none, ratio, stop
from vault_agent.text import tokenize

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotView

LOOSE_MIN_OVERLAP = 0.6
MAX_CANDIDATES_CAP = FIND_MAX_CANDIDATES_CAP
MAX_TIME_MS = FIND_MAX_TIME_MS
STAGE0_FETCH_CAP = 5_000
READY_SUFFICIENCY = 0.8
AGREED_SUFFICIENCY = 0.9  # hybrid lead first in both rankers, or named by the query
READY_MAX_RANGES = 3
READY_MAX_LINES = 200  # a longer range is scanned, not read at once
UNRANKED = 1 << 30
INTEGRATE_FILES = 3  # Stage 1.5 integrates the best-ranked files only (READY_MAX_RANGES reads)

Cutoff = Literal["time_budget", "candidate_cap", "stage_cap", "hard_limit"]
Stage1 = Callable[[str, list[Any]], tuple[list[Ranked], int]]  # (scope SQL, params) → ranked


class SignalCoverage(Wire):
    normalized: float
    loose: float


class FindSummary(Wire):
    scanned_files: int
    scanned_nodes: int
    candidates: int
    warnings: int
    max_stage_applied: float
    scope_expanded: bool
    integrated_candidates: int
    signal_coverage: SignalCoverage
    file_bias_ratio: float
    gap_ranges_count: int
    sufficiency_score: float
    integration_status: Literal["ready", "needs_followup", "blocked"]
    cutoff_reason: Cutoff | None = omit_none()


class FindData(Wire):
    trace_id: str
    summary: FindSummary
    next_actions: list[NextAction]


@dataclass
class Cand:
    path: str
    ordinal: int
    start: int
    end: int
    exact: bool
    overlap: float
    terms: frozenset[str]
    rank: int = UNRANKED  # position in the search ranking (find_rank.py)
    lead: str = ""  # hybrid: the ranking's first chunk, "agreed" | "disputed" (find_rank.Ranked)


def normalize(text: str) -> str:
    """Stage 0 normal form: NFKC, casefold, whitespace runs collapsed to one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass
class Pass:
    files: int
    nodes: int
    cands: list[Cand]
    total: int
    cutoff: Cutoff | None
    stage1_ran: bool


def _chunk_rows(
    con: duckdb.DuckDBPyConnection, keys: list[tuple[str, int]], budget: Budget
) -> dict[tuple[str, int], tuple[int, int, str]]:
    """(start, end, text) of chunks by key, from the segments holding their notes."""
    if not keys:
        return {}
    rows = chunks_of_notes(
        con,
        sorted({p for p, _ in keys}),
        "path, ordinal, start_line, end_line, text",
        lambda sql, params: budget.run(con, sql, params),
    )
    wanted = set(keys)
    return {(p, int(o)): (int(a), int(b), t or "") for p, o, a, b, t in rows if (p, int(o)) in wanted}


@dataclass(frozen=True)
class PassInputs:
    """What the passes of one find call share (`stage1` None: Stage 1 does not run)."""

    con: duckdb.DuckDBPyConnection
    query: str
    tokens: list[str]
    cap: int
    budget: Budget
    manifest: Manifest
    has_post: bool  # the postings index exists: q_full holds the chunks with every token
    stage1: Stage1 | None = None


def _run_pass(job: PassInputs, scope: Scope) -> Pass:
    con, query, tokens, cap, budget, stage1 = job.con, job.query, job.tokens, job.cap, job.budget, job.stage1
    where, params = scope.sql()
    if scope.prefix or scope.glob:
        files = con.execute(f"SELECT count(*) FROM notes WHERE {where}", params).fetchall()[0][0]
        nodes = con.execute(f"SELECT count(*) FROM chunks WHERE {where}", params).fetchall()[0][0]
    else:
        files, nodes = job.manifest.note_count, job.manifest.chunk_count
    want = normalize(query)
    cands: dict[tuple[str, int], Cand] = {}
    # The chunks holding every query token: q_full when the postings index exists
    # (find_postings.py, with tombstones applied), else the same selection from `terms`.
    full = (
        "SELECT path, chunk_ordinal FROM q_full"
        if job.has_post
        else "SELECT path, chunk_ordinal FROM terms WHERE term IN (SELECT unnest(?::VARCHAR[])) "
        "GROUP BY path, chunk_ordinal HAVING count(DISTINCT term) = ?"
    )
    full_params: list[Any] = [] if job.has_post else [tokens, len(tokens)]
    if tokens:
        sql = f"SELECT path, chunk_ordinal FROM ({full}) WHERE {where} ORDER BY path, chunk_ordinal LIMIT ?"
        rows = [(p, int(o)) for p, o in budget.run(con, sql, [*full_params, *params, STAGE0_FETCH_CAP])]
        details = _chunk_rows(con, rows, budget)
        for path, ordinal in rows:
            start, end, text = details.get((path, ordinal), (0, 0, ""))
            if want and want in normalize(text):
                # A chunk of q_full holds every query token (tokens are distinct).
                cands[(path, ordinal)] = Cand(path, ordinal, start, end, True, 1.0, frozenset(tokens))
    else:
        sql = (
            "SELECT path, ordinal, start_line, end_line FROM chunks "
            f"WHERE {where} AND contains(lower(text), lower(?)) ORDER BY path, ordinal LIMIT ?"
        )
        for path, ordinal, start, end in budget.run(con, sql, [*params, query.strip(), STAGE0_FETCH_CAP]):
            cands[(path, int(ordinal))] = Cand(
                path, int(ordinal), int(start), int(end), True, 1.0, frozenset()
            )
    cutoff: Cutoff | None = None
    stage1_ran = False
    total = len(cands)
    if len(cands) >= cap:
        # More exact hits than max_candidates: the cap cut them (candidate_cap). Exactly the
        # cap: nothing was dropped, but Stage 1 did not run (stage_cap).
        cutoff = "candidate_cap" if len(cands) > cap else "stage_cap"
    elif budget.over():
        cutoff = "time_budget"
    elif tokens and stage1 is not None:
        stage1_ran = True
        ranked, _ = stage1(where, params)
        for r in ranked:
            key = (r.path, r.ordinal)
            if key in cands:
                cands[key].rank = r.rank
                cands[key].lead = r.lead
            else:
                cands[key] = Cand(
                    r.path, r.ordinal, r.start, r.end, False, r.overlap, r.terms, r.rank, r.lead
                )
        total = len(cands)
        if budget.over():
            cutoff = "time_budget"
    ordered = sorted(
        cands.values(), key=lambda c: (not c.exact, c.rank, -c.overlap, c.path, c.start, c.ordinal)
    )
    if len(ordered) > cap or total > cap:
        cutoff = cutoff or "candidate_cap"
    return Pass(int(files), int(nodes), ordered[:cap], total, cutoff, stage1_ran)


@dataclass
class Group:
    path: str
    start: int
    end: int
    exact: bool
    best: float
    rank: int = UNRANKED


def top_files(cands: list[Cand], limit: int) -> list[Cand]:
    """The candidates of the `limit` best files (by their best candidate: Stage 0 first,
    then search rank): what Stage 1.5 integrates. Lower-ranked files stay counted in
    `candidates` but would only dilute the proposal."""
    best: dict[str, tuple[bool, int, str]] = {}
    for c in cands:
        key = (not c.exact, c.rank, c.path)
        if c.path not in best or key < best[c.path]:
            best[c.path] = key
    keep = {p for p, _ in sorted(best.items(), key=lambda kv: kv[1])[:limit]}
    return [c for c in cands if c.path in keep]


def integrate(cands: list[Cand]) -> list[Group]:
    """Merge candidate spans per file into ranges (overlapping or adjacent)."""
    by_file: dict[str, list[Cand]] = {}
    for c in cands:
        by_file.setdefault(c.path, []).append(c)
    groups: list[Group] = []
    for path in sorted(by_file):
        for c in sorted(by_file[path], key=lambda x: (x.start, x.end)):
            last = groups[-1] if groups and groups[-1].path == path else None
            if last is not None and c.start <= last.end + 1:
                last.end = max(last.end, c.end)
                last.exact = last.exact or c.exact
                last.best = max(last.best, c.overlap)
                last.rank = min(last.rank, c.rank)
            else:
                groups.append(Group(path, c.start, c.end, c.exact, c.overlap, c.rank))
    return groups


def lead_sufficiency(words: float, cands: list[Cand]) -> float:
    """Sufficiency with the hybrid ranking's evidence: a lead both rankers put first (or
    that the query names, search_modes.lead_agreed) is sufficient by itself,
    AGREED_SUFFICIENCY, whatever share of the query's words it holds (a paraphrase, a
    question in another language); otherwise the words' formula. Measured on the dev sets
    (docs/retrieval.md): capping a disputed lead below READY_SUFFICIENCY lost more right
    `ready` answers than wrong ones."""
    if any(c.lead == "agreed" for c in cands):
        return max(words, AGREED_SUFFICIENCY)
    return words


def _read(g: Group, conf: float) -> NextAction:
    return action("vault_read", conf, {"path": g.path, "range": {"start_line": g.start, "end_line": g.end}})


@dataclass(frozen=True)
class FindRequest:
    """vault_find's parameters: the query, its scope (`relative_dir`, `glob`; widened to the
    vault when nothing in it matches) and its budget (`max_candidates`, `time_ms`)."""

    query: object
    relative_dir: str | None = None
    glob: str | None = None
    max_candidates: int | None = None
    time_ms: int | None = None


def vault_find(
    vault: Vault, reader: SnapshotReader, request: FindRequest, cache: dict[Any, Any] | None = None
) -> Outcome[FindData]:
    """Locate where a query is answered and propose the next tool; see the module doc.

    Raises:
        InvalidParameter: empty query, budget out of range, bad glob.
        InvalidPath, Forbidden, NotFound: a bad scope.relative_dir.
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    query, relative_dir, glob = request.query, request.relative_dir, request.glob
    max_candidates, time_ms = request.max_candidates, request.time_ms
    if not isinstance(query, str) or not query.strip():
        raise empty_parameter("query")
    if len(query) > MAX_QUERY_CHARS:
        raise too_long_parameter("query", MAX_QUERY_CHARS)
    cap = FIND_DEFAULT_MAX_CANDIDATES if max_candidates is None else max_candidates
    if not 1 <= cap <= MAX_CANDIDATES_CAP:
        raise out_of_range("budget.max_candidates", 1, MAX_CANDIDATES_CAP)
    budget_ms = FIND_DEFAULT_TIME_MS if time_ms is None else time_ms
    if not 1 <= budget_ms <= MAX_TIME_MS:
        raise out_of_range("budget.time_ms", 1, MAX_TIME_MS)
    budget = Budget(budget_ms / 1000)
    scope = resolve_scope(vault, relative_dir, glob)
    tokens = list(dict.fromkeys(tokenize(query)))
    weights: dict[str, float] = {}  # query token → weight in coverage (find_rank.py)
    with reader.acquire() as view:
        view.con.execute("SET parquet_metadata_cache = true").fetchall()  # session-local
        warnings: list[WarningItem] = list(view.warnings())
        index = postings_index(reader, view, cache) if tokens else None
        if index is not None:
            view.con.register("q_full", chunks_with_all(index, tokens, dead_paths(view.con), budget))
        try:

            def stage1(where: str, params: list[Any], v: SnapshotView = view) -> tuple[list[Ranked], int]:
                ranked, seen_chunks, w = ranked_candidates(reader, v, query, tokens, where, params)
                weights.update(w)
                return ranked, seen_chunks

            job = PassInputs(view.con, query, tokens, cap, budget, view.manifest, index is not None, stage1)
            result = _run_pass(job, scope)
            expanded = False
            if not result.cands and (scope.prefix or scope.glob) and not budget.over():
                result = _run_pass(job, Scope("", None))
                expanded = True
        finally:
            if index is not None:
                view.con.unregister("q_full")
        snapshot_id = view.manifest.snapshot_id
    groups = integrate(top_files(result.cands, INTEGRATE_FILES))
    n = len(groups)
    per_file: dict[str, int] = {}
    for g in groups:
        per_file[g.path] = per_file.get(g.path, 0) + 1
    seen = set().union(*(c.terms for c in result.cands)) if result.cands else set()
    loose = ratio(weighted_share(seen, tokens, weights)) if tokens else (1.0 if result.cands else 0.0)
    strength = (
        1.0 if any(c.exact for c in result.cands) else max((c.overlap for c in result.cands), default=0.0)
    )
    sufficiency = ratio(lead_sufficiency(0.6 * strength + 0.4 * loose, result.cands)) if n else 0.0
    gaps = sum(k - 1 for k in per_file.values())
    status: Literal["ready", "needs_followup", "blocked"]
    if n == 0:
        status = "blocked"
    elif (
        sufficiency >= READY_SUFFICIENCY
        and gaps == 0
        and n <= READY_MAX_RANGES
        and all(g.end - g.start + 1 <= READY_MAX_LINES for g in groups)
    ):
        status = "ready"
    else:
        status = "needs_followup"
    strongest = sorted(groups, key=lambda g: (not g.exact, g.rank, -g.best, g.path, g.start))
    if status == "ready":
        actions = [_read(g, sufficiency) for g in strongest[:READY_MAX_RANGES]] + [stop(sufficiency)]
    elif status == "needs_followup":
        span: dict[str, int] = {}
        for g in groups:
            span[g.path] = span.get(g.path, 0) + g.end - g.start + 1
        top_file = min(per_file, key=lambda p: (-per_file[p], -span[p], p))
        actions = [action("vault_scan", 0.7, {"path": top_file}), _read(strongest[0], 0.5)]
    else:
        actions = [stop(1.0)]
    stage = 0.0 if tokens and not result.stage1_ran else (1.5 if n else 1.0)
    summary = FindSummary(
        scanned_files=result.files,
        scanned_nodes=result.nodes,
        candidates=result.total,
        warnings=len(warnings),
        max_stage_applied=stage,
        scope_expanded=expanded,
        integrated_candidates=n,
        signal_coverage=SignalCoverage(
            normalized=ratio(sum(1 for g in groups if g.exact) / n) if n else 0.0, loose=loose if n else 0.0
        ),
        file_bias_ratio=ratio(max(per_file.values()) / n) if n else 0.0,
        gap_ranges_count=gaps,
        sufficiency_score=sufficiency,
        integration_status=status,
        cutoff_reason=result.cutoff,
    )
    key = json.dumps([query, relative_dir, glob, cap, budget_ms, snapshot_id], ensure_ascii=False)
    trace_id = "find-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return Outcome(data=FindData(trace_id=trace_id, summary=summary, next_actions=actions), warnings=warnings)
