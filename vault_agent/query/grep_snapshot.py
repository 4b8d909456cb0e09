"""The first matching lines of the snapshot's chunk text, in path/line order, note by note.

One query that split every matching chunk into lines and kept the first `want` distinct
(path, line) pairs made DuckDB hold the lines of every matching chunk before its
`DISTINCT ON ... LIMIT`: a common word matches ~200k chunks at 100k notes, a ~200 MB
transient (issue 11: the peak of `serve`). Here a first scan keeps only the paths of the
matching chunks (the text is read to test it, not kept); then the notes are taken in path
order, a batch at a time, and only their chunks are split into lines, by the same SQL, until
`want` lines are found. Lines of later notes sort after every line of earlier ones, so the
answer is the same; a spent budget gives no rows, as the single query did.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.contracts import TABLES
from vault_agent.query.budget import Budget
from vault_agent.query.find_rank import chunks_of_notes

CHUNKS = TABLES["chunks"]
COLUMNS = ((0, "path"), (2, "start_line"), (3, "text"))  # of the rows chunks_of_notes reads
FIRST_BATCH = 32  # notes split into lines first; doubled per batch while lines are missing
MAX_BATCH = 4_096


def lines_sql(source: str, where_chunk: str, line_pred: str, extra: str = "") -> str:
    """(path, line_no, line, extra...) of the lines of `source`'s chunks matching `line_pred`."""
    return (
        f"SELECT path, start_line + i - 1 AS line_no, line {extra} FROM ("
        f"  SELECT path, start_line, unnest(parts) AS line, generate_subscripts(parts, 1) AS i FROM ("
        f"    SELECT path, start_line, string_split(text, chr(10)) AS parts FROM {source} WHERE {where_chunk}"
        f"  )"
        f") WHERE {line_pred}"
    )


def _matching_paths(
    con: duckdb.DuckDBPyConnection, where: str, params: list[Any], budget: Budget
) -> list[str] | None:
    """Distinct paths of the live chunks matching `where`, sorted (None: budget spent)."""
    table = budget.run_arrow(con, f"SELECT path FROM chunks WHERE {where}", params)
    if table is None:
        return None
    paths = pc.unique(table["path"])
    return [str(p) for p in pc.take(paths, pc.sort_indices(paths)).to_pylist()]


class Clause(NamedTuple):
    """A piece of SQL and the values of its `?` placeholders, in order."""

    sql: str
    params: list[Any]


def first_lines(
    con: duckdb.DuckDBPyConnection, chunks: Clause, lines: Clause, extra: Clause, want: int, budget: Budget
) -> list[tuple[Any, ...]]:
    """The first `want` distinct (path, line_no, line, extra) of the chunks matching the
    condition `chunks` whose line matches the condition `lines`, in path/line order
    (`extra`: the columns after `line`, as `, expr AS name`)."""
    paths = _matching_paths(con, chunks.sql, chunks.params, budget)
    if not paths:
        return []
    rows: list[tuple[Any, ...]] = []
    start, size = 0, FIRST_BATCH
    while start < len(paths) and len(rows) < want:
        batch = paths[start : start + size]
        start, size = start + len(batch), min(size * 2, MAX_BATCH)
        batch_chunks = chunks_of_notes(
            con, batch, "path, ordinal, start_line, text", lambda sql, params: budget.run(con, sql, params)
        )
        if budget.hit:
            return []
        table = pa.table(
            {name: pa.array([r[i] for r in batch_chunks], CHUNKS.field(name).type) for i, name in COLUMNS},
            schema=pa.schema([CHUNKS.field(name) for _, name in COLUMNS]),
        )
        con.register("q_chunks", table)
        try:
            # The single query's SQL, over these notes' chunks instead of all of them.
            sql = lines_sql("q_chunks", chunks.sql, lines.sql, extra.sql)
            sql = f"SELECT DISTINCT ON (path, line_no) * FROM ({sql}) ORDER BY path, line_no LIMIT ?"
            params = [*extra.params, *chunks.params, *lines.params, want - len(rows)]
            rows += budget.run(con, sql, params)
        finally:
            con.unregister("q_chunks")
        if budget.hit:
            return []
    return rows[:want]
