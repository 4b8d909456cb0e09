"""`search`: ranked chunks from the snapshot's full-text engine (fielded BM25, see search_engine.py).

Query terms come from `text.tokenize` (the tokenizer that built the engine's fields: NFKC,
casefold, words, CJK bigrams). `mode` picks the rankers (search_modes.py; lexical is this
module's engine), `group` = `chunk` (every hit) or `note` (the best chunk per note).
Scores are rounded to 6 decimals; ties go to path, then chunk ordinal (byte-stable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from vault_agent.contracts import MAX_QUERY_CHARS, RANKED_LIMIT_MAX, Outcome, WarningItem
from vault_agent.errors import (
    InvalidLimit,
    InvalidParameter,
    empty_parameter,
    out_of_range,
    too_long_parameter,
)
from vault_agent.query.engine_details import engine_details
from vault_agent.query.models import Camel
from vault_agent.query.search_engine import open_engine, ranked_chunks, ranked_notes
from vault_agent.query.search_explain import HitExplain, explain_hits
from vault_agent.query.search_modes import (
    GROUPS,
    MODES,
    Hit,
    HybridRequest,
    embeddings_available,
    hybrid_ranking,
    lead_agreed,
    script_held,
)
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.structured.candidates import candidate_paths
from vault_agent.query.structured.filters import SearchFilters
from vault_agent.search_fields import FIELD_BOOSTS, analyze_terms, decode_detail
from vault_agent.semantic.confidence import confident_hits, floor, model_reads
from vault_agent.semantic.fusion import FusedHit
from vault_agent.semantic.progress import semantic_warnings
from vault_agent.semantic.query import semantic_search
from vault_agent.text import tokenize

SEARCH_LIMIT_DEFAULT = 10
SEARCH_LIMIT_MAX = RANKED_LIMIT_MAX
SNIPPET_CHARS = 240
MAX_QUERY_TERMS = 64


class SearchResult(Camel):
    path: str
    title: str | None
    heading_path: list[str]
    start_line: int
    end_line: int
    score: float
    snippet: str
    explain: HitExplain | None = Field(default=None, exclude_if=lambda v: v is None)


class SearchData(Camel):
    query_terms: int
    mode: str
    group: str
    results: list[SearchResult]
    index_freshness: str


def query_terms(query: object) -> list[str]:
    """Distinct search terms of a query, in first-seen order (at most 64).

    Raises:
        InvalidParameter: empty, blank or over-long query.
    """
    if not isinstance(query, str) or not query.strip():
        raise empty_parameter("query")
    if len(query) > MAX_QUERY_CHARS:
        raise too_long_parameter("query", MAX_QUERY_CHARS)
    return list(dict.fromkeys(tokenize(query)))[:MAX_QUERY_TERMS]


def check_limit(limit: int | None, default: int = SEARCH_LIMIT_DEFAULT) -> int:
    """Raises: InvalidLimit outside 1–50."""
    value = default if limit is None else limit
    if not 1 <= value <= SEARCH_LIMIT_MAX:
        raise out_of_range("limit", 1, SEARCH_LIMIT_MAX, error=InvalidLimit)
    return value


def check_choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    """Raises: InvalidParameter for a value outside `allowed`."""
    if value is not None and value not in allowed:
        raise InvalidParameter.about(name, f"must be one of: {', '.join(allowed)}")
    return value


def make_snippet(text: str, terms: list[str]) -> str:
    """At most 240 characters of chunk text around the first line holding a query term."""
    lines = text.split("\n")
    wanted = set(terms)
    pos = 0
    offset = 0
    for line in lines:
        hits = wanted.intersection(tokenize(line))
        if hits:
            folded = line.casefold()
            found = [folded.find(t) for t in hits if folded.find(t) >= 0]
            pos = offset + (min(found) if found else 0)
            break
        offset += len(line) + 1
    flat = text.replace("\n", " ")
    if len(flat) <= SNIPPET_CHARS:
        return " ".join(flat.split())
    start = max(0, min(pos - SNIPPET_CHARS // 4, len(flat) - SNIPPET_CHARS))
    body = " ".join(flat[start : start + SNIPPET_CHARS].split())
    return ("…" if start else "") + body + ("…" if start + SNIPPET_CHARS < len(flat) else "")


def hit_details(
    view: SnapshotView,
    hits: list[Hit],
    known: dict[tuple[str, int], bytes] | None = None,
    index_dir: Path | None = None,
) -> list[tuple[Any, ...]]:
    """(title, heading_path, start, end, text) per hit from the pinned snapshot; a note
    without chunks (found by its name) answers its title and lines 1..line_count.

    `known`: details the engine returned with its hits (stored in the engine's documents,
    so a lexical search reads no Parquet). The others (semantic hits) are read from the one
    segment holding each note's live rows (`_notes._seg`): its Parquet file is path-sorted,
    so the scan reads only the hit notes' row groups instead of every segment's. Given the
    state's `index_dir`, they come from the snapshot's engine first (engine_details.py)."""
    known = dict(known or {})
    unknown = [(p, o) for p, o, _ in hits if (p, o) not in known]
    if unknown and index_dir is not None and view.manifest.search_index:
        index, searcher = open_engine(index_dir, view.manifest.search_index)
        known.update(engine_details(index, searcher, unknown))
    out: list[tuple[Any, ...] | None] = [
        decode_detail(known[(p, o)]) if (p, o) in known else None for p, o, _ in hits
    ]
    missing = [h for h, d in zip(hits, out, strict=True) if d is None]
    if missing:
        read = iter(_parquet_details(view, missing))
        out = [d if d is not None else next(read) for d in out]
    return [d for d in out if d is not None]


def _parquet_details(view: SnapshotView, hits: list[Hit]) -> list[tuple[Any, ...]]:
    con = view.con
    paths = sorted({p for p, _, _ in hits})
    notes: dict[str, tuple[Any, int]] = {}
    by_seg: dict[int, list[str]] = {}
    for path, title, lines, seg in con.execute(
        "SELECT path, title, line_count, _seg FROM _notes WHERE path IN (SELECT unnest(?::VARCHAR[]))",
        [paths],
    ).fetchall():
        notes[path] = (title, int(lines or 0))
        by_seg.setdefault(int(seg), []).append(path)
    chunks: dict[tuple[str, int], tuple[Any, ...]] = {}
    for seg, seg_paths in sorted(by_seg.items()):
        marks = ", ".join("?" * len(seg_paths))  # a constant IN list: pushed into the Parquet scan
        rows = con.execute(
            f"SELECT path, ordinal, heading_path, start_line, end_line, text FROM {view.segment_table('chunks', seg)} "
            f"WHERE path IN ({marks})",
            seg_paths,
        ).fetchall()
        chunks.update({(r[0], int(r[1])): r[2:] for r in rows})
    out = []
    for path, ordinal, _ in hits:
        title, lines = notes.get(path, (None, 0))
        hp, start, end, text = chunks.get((path, ordinal), ([], min(1, lines), lines, ""))
        out.append((title, hp, start, end, text))
    return out


def lexical_hits(
    reader: SnapshotReader,
    view: SnapshotView,
    terms: list[str],
    limit: int,
    group: str,
    details: dict[tuple[str, int], bytes] | None = None,
    allowed: frozenset[str] | None = None,
) -> list[Hit]:
    """The engine's top hits of the pinned snapshot (chunks, or the best chunk per note);
    `details` receives what the engine stored for each (see hit_details); `allowed`
    restricts them to those notes (search filters)."""
    index, searcher = open_engine(Path(reader.settings.index_dir), view.manifest.search_index)
    rank = ranked_notes if group == "note" else ranked_chunks
    return rank(index, searcher, terms, limit, details, allowed)


FUSION_POOL = 50  # candidates each ranker contributes to hybrid fusion (then cut to the limit)


def any_term_held(reader: SnapshotReader, view: SnapshotView, terms: list[str]) -> bool:
    """Whether any field of any chunk holds one of the query's (analyzed) terms."""
    _, searcher = open_engine(Path(reader.settings.index_dir), view.manifest.search_index)
    return any(searcher.doc_freq(field, t) > 0 for t in analyze_terms(terms) for field in FIELD_BOOSTS)


def no_confident_match(best: float | None) -> WarningItem:
    near = "nothing" if best is None else f"the nearest note's similarity is {best:.3f}, below {floor():.3f}"
    return WarningItem(
        code="NO_CONFIDENT_MATCH",
        message=f"no note holds the query's words and none is close in meaning ({near}); "
        "try other words, or mode=lexical for exact matches only",
    )


@dataclass(frozen=True)
class RankRequest:
    """One ranking of a pinned snapshot: the query and its terms (query_terms), how many hits,
    the mode asked for (None: hybrid when the snapshot has embeddings, else lexical), the
    grouping (`chunk` | `note`), the notes the search filters leave (None: all), and whether
    to keep the engine's stored detail of the hits (`details`, see hit_details) and how each
    hit was ranked (`explain`)."""

    query: str
    terms: list[str]
    limit: int
    mode: str | None = None
    group: str = "chunk"
    allowed: frozenset[str] | None = None
    details: bool = False
    explain: bool = False


@dataclass
class Ranking:
    """What ranked_hits answers: the hits, the mode answered, its warnings; the engine's stored
    detail of the hits it read (`details`: asked for, or a hybrid answer's lexical hits);
    how each hit was ranked (`explained`, in hit order, when asked for); whether a hybrid
    answer's lead is backed by both kinds of evidence (`lead_agreed`, search_modes.lead_agreed)."""

    hits: list[Hit]
    mode: str
    warnings: list[WarningItem]
    details: dict[tuple[str, int], bytes] = field(default_factory=dict)
    explained: list[FusedHit] | None = None
    lead_agreed: bool = False


def ranked_hits(reader: SnapshotReader, view: SnapshotView, request: RankRequest) -> Ranking:
    """The ranking every surface uses (search, vault_find) for one pinned snapshot (see
    RankRequest and Ranking); `allowed` is applied in each ranker before ranking.

    A semantic or hybrid query that no note holds a word of answers only the neighbours at
    the model's floor or above (semantic.confidence; all of them when the vault holds no
    word in the query's script: a question in another language), and no hits with
    NO_CONFIDENT_MATCH when there are none (made-up words must not get ten
    confident-looking results)."""
    query, terms, limit, mode, group, allowed = (
        request.query, request.terms, request.limit, request.mode, request.group, request.allowed
    )  # fmt: skip
    details: dict[tuple[str, int], bytes] | None = {} if request.details else None
    explained: list[FusedHit] | None = [] if request.explain else None
    wanted = mode or ("hybrid" if embeddings_available(view) else "lexical")
    if wanted == "lexical":  # every answer says how far embeddings are (SEMANTIC_PENDING / _OFF)
        warnings = semantic_warnings(reader, view, lexical_answer=mode is None)
        hits = lexical_hits(reader, view, terms, limit, group, details, allowed)
        if explained is not None:
            explained.extend(
                FusedHit(p, o, s, lexical_rank=i, lexical_score=s) for i, (p, o, s) in enumerate(hits, 1)
            )
        return Ranking(hits, "lexical", warnings, details or {}, explained)
    pool = max(limit, FUSION_POOL)
    found = semantic_search(reader, view, query, pool, allowed)
    warnings = semantic_warnings(reader, view, lexical_answer=found is None)
    if found is None:  # answered lexical: one warning says so (and why), not two
        warnings = warnings or [
            WarningItem(
                code="SEMANTIC_UNAVAILABLE",
                message=f"{wanted} search needs embeddings and this index has none; this answer is lexical",
            )
        ]
        hits = lexical_hits(reader, view, terms, limit, group, details, allowed)
        return Ranking(hits, "lexical", warnings, details or {}, explained)
    semantic = found.hits
    stored = details if details is not None else {}  # the lexical first hit's title: fusion's evidence
    lexical: list[Hit] = []
    if wanted == "semantic":  # only whether any note holds a query word: dictionary look-ups
        held = bool(terms) and any_term_held(reader, view, terms)
    else:
        lexical = lexical_hits(reader, view, terms, pool, group, stored, allowed) if terms else []
        # With a filter, a query word held only by notes it leaves out is still a real word:
        # the confidence gate is for queries no note of the vault holds a word of.
        held = bool(lexical) or (allowed is not None and bool(terms) and any_term_held(reader, view, terms))
    if not held:  # no note holds a word of the query: only close neighbours answer
        # a query the model cannot read wholly is judged by the floor in any script
        same_script = not model_reads(query) or script_held(
            open_engine(Path(reader.settings.index_dir), view.manifest.search_index), query
        )
        confident = confident_hits([h[2] for h in semantic], same_script=same_script)
        if not confident:
            nearest = no_confident_match(semantic[0][2] if semantic else None)
            return Ranking([], wanted, [*warnings, nearest], stored, explained)
        semantic = semantic[:confident]
    if wanted == "semantic":
        if explained is not None:
            explained.extend(
                FusedHit(p, o, s, semantic_rank=i, cosine=s)
                for i, (p, o, s) in enumerate(semantic[:limit], 1)
            )
        return Ranking(semantic[:limit], "semantic", warnings, stored, explained)
    engine = open_engine(Path(reader.settings.index_dir), view.manifest.search_index) if lexical else None
    ranked = hybrid_ranking(engine, HybridRequest(query, terms, lexical, stored, semantic, limit, allowed))
    fused = [h.hit for h in ranked]
    if explained is not None:
        explained.extend(ranked)
    agreed = lead_agreed(fused, lexical, semantic, terms, stored)
    return Ranking(fused, "hybrid", warnings, stored, explained, agreed)


@dataclass(frozen=True)
class SearchRequest:
    """search's parameters: the query, at most `limit` hits (default 10, 1–50), the mode
    (search_modes.MODES; None: the default), the grouping (`chunk` | `note`), the search
    filters (None: every note), and whether each hit says how it was ranked."""

    query: object
    limit: int | None = None
    mode: str | None = None
    group: str | None = None
    filters: SearchFilters | None = None
    explain: bool | None = None


def search(reader: SnapshotReader, request: SearchRequest) -> Outcome[SearchData]:
    """Ranked chunks for a query, with title, heading path, line span and snippet; with
    `filters` (tags, folder, modified_after/before), among the notes they select; with
    `explain`, each hit also says how it was ranked (search_explain.HitExplain).

    Raises:
        InvalidParameter: empty or over-long query, unknown mode or group.
        InvalidLimit: limit outside 1–50.
        InvalidQuery: a malformed filter.
        IndexNotFound, IndexIncompatible: no usable snapshot (or search index).
    """
    q, filters = request.query, request.filters
    terms = query_terms(q)
    size = check_limit(request.limit)
    check_choice("mode", request.mode, MODES)
    grouping = check_choice("group", request.group, GROUPS) or "chunk"
    assert isinstance(q, str)
    with reader.acquire() as view:
        warnings = list(view.warnings())
        if not terms:
            warnings.append(
                WarningItem(
                    code="NO_SEARCH_TERMS", message="the query has no words or CJK characters to search for"
                )
            )
        allowed = candidate_paths(reader, view, filters) if filters is not None else None
        rank = RankRequest(q, terms, size, request.mode, grouping, allowed, True, bool(request.explain))
        ranking = ranked_hits(reader, view, rank)
        hits, answered, explained = ranking.hits, ranking.mode, ranking.explained
        warnings += ranking.warnings
        details = hit_details(view, hits, ranking.details, Path(reader.settings.index_dir))
        why = (
            explain_hits(reader, view, terms, explained, details)
            if explained is not None
            else [None] * len(hits)
        )
        results = [
            SearchResult(
                path=path,
                title=title,
                heading_path=list(hp or []),
                start_line=int(start),
                end_line=int(end),
                score=score,
                snippet=make_snippet(text or "", terms),
                explain=reason,
            )
            for (path, _, score), (title, hp, start, end, text), reason in zip(
                hits, details, why, strict=True
            )
        ]
        data = SearchData(
            query_terms=len(terms),
            mode=answered,
            group=grouping,
            results=results,
            index_freshness=view.freshness,
        )
        return Outcome(data=data, warnings=warnings, freshness=view.freshness)
