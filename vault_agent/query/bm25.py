"""Chunk BM25 over the snapshot's `terms` postings (pyarrow kernels; DuckDB SQL fallback).

Used by `related` (term overlap); ranked `search` runs on the full-text engine (search.py).

score(chunk) = Σ over distinct query terms t present in the chunk of
    idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avglen)),
    idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)),  k1 = 1.2, b = 0.75,
where N = chunk count, df = chunks holding t, len = the chunk's token count, avglen = the
mean token count. Query terms come from `text.tokenize` (the tokenizer that built the
postings: NFKC, casefold, words, CJK bigrams). Scores are rounded to 6 decimals before
ordering; ties go to path, then chunk ordinal, so answers are byte-stable.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.query.postings import (
    SegmentTerms,
    SnapshotChunks,
    chunk_keys,
    chunk_rows,
    dead_filter,
    dead_paths,
    read_postings,
    score_postings,
    snapshot_chunks,
    term_index,
)
from vault_agent.query.toolkit import remember

K1 = 1.2
MILLION = pa.scalar(1e6, pa.float64())  # typed: bare Python numbers are slow in pyarrow kernels
B = 0.75


LENGTHS_TABLE = "retrieval_chunk_len"
_LENGTHS_LOCK = threading.Lock()


def ensure_lengths(con: duckdb.DuckDBPyConnection) -> None:
    """Copy the chunk lengths of the pinned snapshot into memory once, inside its schema.

    BM25 joins every posting to its chunk's length; joining the `chunks` Parquet view
    costs a scan of it per query, and a string-keyed join is several times slower than an
    integer one, so the key is the 64-bit hash of (path, ordinal) (a collision among a
    million chunks has odds near 1e-8 and would only borrow another chunk's length). The
    table lives in the snapshot's schema (the cursor's `USE s<id>`), so the reader drops it
    with the snapshot. Parquet footers are cached for this session's scans.
    """
    con.execute("SET parquet_metadata_cache = true").fetchall()
    create = f"CREATE TABLE IF NOT EXISTS {LENGTHS_TABLE} AS SELECT hash(path, ordinal) AS h, token_count FROM chunks"
    # One creator at a time: two concurrent CREATEs of the same table conflict in DuckDB.
    with _LENGTHS_LOCK:
        con.execute(create).fetchall()


def corpus_stats(
    con: duckdb.DuckDBPyConnection, cache: dict[Any, Any] | None, snapshot_id: int
) -> tuple[int, float]:
    """(chunk count, mean token count) of a snapshot, cached per snapshot id."""
    key = ("bm25_stats", snapshot_id)
    if cache is not None and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    ensure_lengths(con)
    rows = con.execute(f"SELECT count(*), coalesce(avg(token_count), 0) FROM {LENGTHS_TABLE}").fetchall()
    row = rows[0] if rows else None
    stats = (int(row[0]), float(row[1])) if row else (0, 0.0)
    if cache is not None:
        remember(cache, "bm25_stats", snapshot_id, stats)
    return stats


BM25_TEMPLATE = """
WITH q AS (SELECT unnest(?::VARCHAR[]) AS term),
post AS ({post}),
df AS (SELECT term, count(*) AS df FROM post GROUP BY term),
scored AS (
  SELECT p.path, p.chunk_ordinal,
         sum(ln(1 + (?::DOUBLE - df.df + 0.5) / (df.df + 0.5))
             * p.tf * (? + 1) / (p.tf + ? * (1 - ? + ? * c.token_count / ?::DOUBLE))) AS score
  FROM post p JOIN df USING (term)
  JOIN retrieval_chunk_len c ON c.h = hash(p.path, p.chunk_ordinal)
  GROUP BY p.path, p.chunk_ordinal
),
top AS (
  SELECT path, chunk_ordinal, round(score, 6) AS score FROM scored
  ORDER BY round(score, 6) DESC, path, chunk_ordinal LIMIT ?
)
SELECT path, chunk_ordinal, score FROM top ORDER BY score DESC, path, chunk_ordinal
"""


VIEW_POSTINGS = (
    "SELECT t.term, t.path, t.chunk_ordinal, t.tf FROM terms t WHERE t.term IN (SELECT term FROM q)"
)
READ_POSTINGS = f"SELECT p.term, p.path, p.chunk_ordinal, p.tf FROM q_post p WHERE {dead_filter('p')}"
BM25_SQL = BM25_TEMPLATE.format(post=VIEW_POSTINGS)
BM25_FAST_SQL = BM25_TEMPLATE.format(post=READ_POSTINGS)


def postings_index(reader: Any, view: Any, cache: dict[Any, Any] | None) -> list[SegmentTerms] | None:
    """The row-group index of the pinned snapshot's term segments (None: use the view)."""
    try:
        return term_index(Path(reader.settings.index_dir), view.manifest, cache)
    except (OSError, ValueError, pa.ArrowException):
        return None


def chunk_map(reader: Any, view: Any, cache: dict[Any, Any] | None) -> SnapshotChunks | None:
    """The chunk rows of the pinned snapshot per segment, tombstones attached (cached)."""
    key = ("chunk_map", view.manifest.snapshot_id)
    if cache is not None and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    try:
        return snapshot_chunks(Path(reader.settings.index_dir), view.manifest, dead_paths(view.con), cache)
    except (OSError, ValueError, pa.ArrowException):
        return None


def rank(
    index: list[SegmentTerms], chunks: SnapshotChunks, terms: list[str], limit: int, df: dict[str, int] | None = None
) -> list[tuple[str, int, float, int]]:
    """Top (path, chunk ordinal, score, global chunk row) for terms, best first, scored with
    pyarrow kernels: the SQL's formula and operation order, DuckDB's round() (scale,
    round half away from zero, unscale) and its tie-break, so answers match the SQL's."""
    if not terms or chunks.count == 0:
        return []
    table = score_postings(index, chunks, terms, K1, B, df)
    if not table.num_rows:
        return []
    scaled = pc.round(pc.multiply(table["score"], MILLION), round_mode="half_towards_infinity")
    scores = pc.divide(scaled, MILLION)
    rows = table["g"]
    if table.num_rows > limit:  # keep every chunk tied with the k-th score, then sort those
        top = pc.select_k_unstable(scores, k=limit, sort_keys=[("score", "descending")])
        keep = pc.greater_equal(scores, pc.min(pc.take(scores, top)))
        scores, rows = pc.filter(scores, keep), pc.filter(rows, keep)
    rows = rows.combine_chunks() if isinstance(rows, pa.ChunkedArray) else rows
    ranked = chunk_keys(chunks, rows).append_column("score", scores).append_column("g", rows)
    keys = [("score", "descending"), ("path", "ascending"), ("chunk_ordinal", "ascending")]
    ranked = ranked.sort_by(keys).slice(0, limit)
    cols = [ranked[c].to_pylist() for c in ("path", "chunk_ordinal", "score", "g")]
    return [(str(p), int(o), float(sc), int(g)) for p, o, sc, g in zip(*cols, strict=True)]


def bm25(
    con: duckdb.DuckDBPyConnection,
    terms: list[str],
    limit: int,
    stats: tuple[int, float],
    index: list[SegmentTerms] | None = None,
    chunks: SnapshotChunks | None = None,
    df: dict[str, int] | None = None,
) -> list[tuple[str, int, float]]:
    """Top (path, chunk ordinal, score) for terms, best first (pyarrow with a chunk map, else
    SQL); `df`, the terms' live postings when the caller knows them, lets the pyarrow path
    read one segment at a time."""
    n, avg = stats
    if not terms or n == 0:
        return []
    if index is not None and chunks is not None:
        return [(p, o, sc) for p, o, sc, _ in rank(index, chunks, terms, limit, df)]
    ensure_lengths(con)
    params = [terms, n, K1, K1, B, B, max(avg, 1e-9), limit]
    if index is None:
        rows = con.execute(BM25_SQL, params).fetchall()
    else:
        con.register("q_post", read_postings(index, terms))
        try:
            rows = con.execute(BM25_FAST_SQL, params).fetchall()
        finally:
            con.unregister("q_post")
    return [(str(p), int(o), float(sc)) for p, o, sc in rows]


def chunk_details(
    con: duckdb.DuckDBPyConnection, hits: list[tuple[str, int, float]]
) -> list[tuple[Any, ...]]:
    """(title, heading_path, start, end, text) per hit, from one query over the hit paths
    (a semi-join on path lets the Parquet scan skip row groups of other notes)."""
    if not hits:
        return []
    paths = sorted({p for p, _, _ in hits})
    rows = con.execute(
        "SELECT c.path, c.ordinal, n.title, c.heading_path, c.start_line, c.end_line, c.text FROM chunks c "
        "LEFT JOIN notes n ON n.path = c.path WHERE c.path IN (SELECT unnest(?::VARCHAR[]))",
        [paths],
    ).fetchall()
    by_key = {(r[0], int(r[1])): r[2:] for r in rows}
    return [by_key.get((p, o), (None, [], 0, 0, "")) for p, o, _ in hits]


def chunk_details_by_row(
    con: duckdb.DuckDBPyConnection, chunks: SnapshotChunks, hits: list[tuple[str, int, float, int]]
) -> list[tuple[Any, ...]]:
    """chunk_details for ranked hits: their chunks' row groups only, titles from `notes`."""
    if not hits:
        return []
    rows = chunk_rows(chunks, [g for _, _, _, g in hits])
    paths = sorted({p for p, _, _, _ in hits})
    titles = dict(
        con.execute(
            "SELECT path, title FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[]))", [paths]
        ).fetchall()
    )
    return [
        (titles.get(p), r["heading_path"], r["start_line"], r["end_line"], r["text"])
        for (p, _, _, _), r in zip(hits, rows, strict=True)
    ]
