"""`vault_find` Stage 1 candidates chosen by the same ranking as `search`.

Stage 1 (loose match) takes the ranked chunks of the pinned snapshot (search.ranked_hits:
the fielded engine, or hybrid once embeddings exist) down to STAGE1_DEPTH, keeps those in
scope whose weighted token coverage is at least LOOSE_MIN_OVERLAP (else the best few with
WEAK_MIN_OVERLAP), and keeps their rank. In hybrid answers the ranking's first chunk in
scope is a candidate whatever its coverage: a paraphrase shares few words with the note
that answers it, and the fused ranking's first hit is that note more often than the first
well-covered chunk (bench_retrieval.py --paraphrase: docs/retrieval.md).
Coverage = the share of the query's token weight found in the chunk's text, its heading
path and its note's name (title, aliases, file name, folder), with the engine's token
analysis (stemmed; CJK function bigrams and tokens common in the index weigh
search_engine.COMMON_WEIGHT). So "Obsidian 怎么做多栏布局" covers a note named
`Obsidian如何制作多栏布局.md` although its text never repeats the question.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from vault_agent.query.search import RankRequest, ranked_hits
from vault_agent.query.search_engine import open_engine, term_weights
from vault_agent.query.snapshot import SnapshotView
from vault_agent.search_fields import analyze_terms
from vault_agent.text import tokenize

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader

STAGE1_DEPTH = 50  # ranked chunks Stage 1 looks at (the engine's top; deeper hits rarely answer)
LOOSE_MIN_OVERLAP = 0.6
# A long natural-language question rarely has 60 % of its words in the note that answers
# it. When no ranked chunk reaches LOOSE_MIN_OVERLAP, the best WEAK_KEPT ranked chunks with
# at least WEAK_MIN_OVERLAP are the candidates (low sufficiency: needs_followup, not blocked).
WEAK_MIN_OVERLAP = 0.3
WEAK_KEPT = 3

Run = Callable[[str, list[Any]], list[tuple[Any, ...]]]  # a query runner (e.g. Budget.run)


@dataclass(frozen=True)
class Ranked:
    path: str
    ordinal: int
    start: int
    end: int
    rank: int  # 0 = the engine's best chunk
    overlap: float  # weighted token coverage, 0..1
    terms: frozenset[str]  # the query tokens (as typed, unstemmed) the chunk covers
    lead: str = ""  # hybrid answers, on the ranking's first chunk: "agreed" | "disputed"


def _names(path: str, title: str | None, aliases: list[str] | None) -> str:
    folder, _, name = path.rpartition("/")
    return " \n ".join([title or "", *(aliases or []), posixpath.splitext(name)[0], folder])


def weighted_share(covered: set[str] | frozenset[str], tokens: list[str], weights: dict[str, float]) -> float:
    """The share of the query's token weight in `covered` (unknown weights count 1)."""
    total = sum(weights.get(t, 1.0) for t in tokens)
    return sum(weights.get(t, 1.0) for t in tokens if t in covered) / total if total else 0.0


def chunks_of_notes(
    con: duckdb.DuckDBPyConnection, paths: list[str], columns: str, run: Run | None = None
) -> list[tuple[Any, ...]]:
    """`columns` (starting with path, ordinal) of every live chunk of `paths`, read from the
    one segment holding each note's live rows (`_notes._seg`) with a constant IN list, which
    DuckDB pushes into that segment's Parquet scan. The `chunks` view with `path IN
    (subquery)` decoded every segment's chunk text instead (a ~200 MB transient at 100k notes)."""
    execute = run or (lambda sql, params: con.execute(sql, params).fetchall())
    by_seg: dict[int, list[str]] = {}
    for path, seg in con.execute(
        "SELECT path, _seg FROM _notes WHERE path IN (SELECT unnest(?::VARCHAR[]))", [paths]
    ).fetchall():
        by_seg.setdefault(int(seg), []).append(path)
    rows: list[tuple[Any, ...]] = []
    for seg, seg_paths in sorted(by_seg.items()):
        marks = ", ".join("?" * len(seg_paths))
        table = SnapshotView.segment_table("chunks", seg)
        rows += execute(f"SELECT {columns} FROM {table} WHERE path IN ({marks})", seg_paths)
    return rows


def ranked_candidates(
    reader: SnapshotReader, view: SnapshotView, query: str, tokens: list[str], where: str, params: list[Any]
) -> tuple[list[Ranked], int, dict[str, float]]:
    """(Stage 1 candidates in rank order, ranked chunks in scope looked at, token weights)."""
    if not tokens:
        return [], 0, {}
    ranking = ranked_hits(reader, view, RankRequest(query, tokens, STAGE1_DEPTH))
    hits, answered = ranking.hits, ranking.mode
    if not hits:
        return [], 0, {}
    con: duckdb.DuckDBPyConnection = view.con
    paths = sorted({p for p, _, _ in hits})
    notes = {  # the hit notes in scope: title, aliases
        r[0]: r[1:]
        for r in con.execute(
            f"SELECT path, title, aliases FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[])) AND {where}",
            [paths, *params],
        ).fetchall()
    }
    rows = chunks_of_notes(con, sorted(notes), "path, ordinal, start_line, end_line, text, heading_path")
    by_key = {(r[0], int(r[1])): r for r in rows}
    _, searcher = open_engine(Path(reader.settings.index_dir), view.manifest.search_index)
    stems = {t: analyze_terms([t]) for t in tokens}
    weights = term_weights(searcher, [s for v in stems.values() for s in v])
    token_weight = {t: max((weights.get(s, 1.0) for s in stems[t]), default=0.0) for t in tokens}
    out: list[Ranked] = []
    weak: list[Ranked] = []  # below the loose threshold, kept only when nothing passes it
    lead: list[Ranked] = []  # hybrid: the ranking's first chunk in scope, whatever its overlap
    seen = 0
    for rank, (path, ordinal, _) in enumerate(hits):
        if path not in notes:
            continue  # out of scope
        seen += 1
        title, aliases = notes[path]
        row = by_key.get((path, ordinal))
        if row is not None:
            _, _, start, end, text, hp = row
            words = " \n ".join([text or "", *(hp or []), _names(path, title, aliases)])
        else:  # a chunkless note, found by its name: its first line
            start, end, words = 1, 1, _names(path, title, aliases)
        have = set(analyze_terms(tokenize(words)))
        covered = frozenset(t for t in tokens if stems[t] and all(s in have for s in stems[t]))
        overlap = min(1.0, weighted_share(covered, tokens, token_weight))
        lead_kind = ""
        if answered == "hybrid" and rank == 0:  # the ranking's own first chunk, in scope
            lead_kind = "agreed" if ranking.lead_agreed else "disputed"
        cand = Ranked(path, ordinal, int(start), int(end), rank, overlap, covered, lead_kind)
        if overlap >= LOOSE_MIN_OVERLAP:
            out.append(cand)
        elif answered == "hybrid" and seen == 1:
            lead.append(cand)
        elif overlap >= WEAK_MIN_OVERLAP and len(weak) < WEAK_KEPT:
            weak.append(cand)
    return lead + (out or weak), seen, token_weight
