"""Where `vault_search`'s matching lines come from: the snapshot's chunk text or the disk.

Notes unchanged since the committed snapshot are searched in its stored chunk text (body
lines; YAML frontmatter and `%% comments %%` are not chunk text); notes changed since, and
every note when no usable snapshot exists, are read from disk (all lines). Both stop at
the search's time budget and return hits in path/line order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from vault_agent.errors import InvalidPath, NotFound
from vault_agent.paths import Vault
from vault_agent.query.budget import Budget
from vault_agent.query.grep_match import Matcher
from vault_agent.query.grep_snapshot import Clause, first_lines
from vault_agent.query.limits import MAX_FILE_BYTES
from vault_agent.query.lines import decode, split_lines, strip_eol
from vault_agent.query.scope import Scope

DISK_BATCH_FILES = 2_000


@dataclass
class Hit:
    path: str
    line: int
    text: str
    matched: str | None = None


def snapshot_hits(
    con: duckdb.DuckDBPyConnection,
    matcher: Matcher,
    scope: Scope,
    skip: list[str],
    want: int,
    budget: Budget,
    after: tuple[str, int] | None = None,
) -> list[Hit]:
    """Hits from the snapshot's chunk text, for notes not in `skip`, in path/line order
    (only those after the (path, line) `after`, the last hit of the previous page)."""
    scope_sql, scope_params = scope.sql()
    where = f"{scope_sql} AND NOT list_contains(?::VARCHAR[], path)"
    params: list[Any] = [*scope_params, skip]
    if after is not None:
        where += " AND path >= ?"
        params.append(after[0])
    if matcher.mode == "loose":
        return _after(_snapshot_loose(con, matcher, where, params, want, budget, after), after, want)
    pred, pred_params = matcher.sql("line")
    if after is not None:  # line_no of lines_sql, spelled out: the WHERE runs before its alias
        pred = f"({pred}) AND (path > ? OR start_line + i - 1 > ?)"
        pred_params = [*pred_params, after[0], after[1]]
    chunk_pred, chunk_params = matcher.sql("text")
    if matcher.mode == "regex" and ("^" in matcher.pattern or "$" in matcher.pattern):
        chunk_params = ["(?m)" + matcher.pattern]  # line anchors inside multi-line chunk text
    extra = ", regexp_extract(line, ?) AS matched" if matcher.mode == "regex" else ", NULL AS matched"
    extra_params = [matcher.pattern] if matcher.mode == "regex" else []
    chunk_where, chunk_all = f"{where} AND {chunk_pred}", params + chunk_params
    # grep_snapshot.py: note by note, not every matching chunk's lines at once
    rows = first_lines(
        con,
        Clause(chunk_where, chunk_all),
        Clause(pred, pred_params),
        Clause(extra, extra_params),
        want,
        budget,
    )
    return [Hit(p, int(n), t, m) for p, n, t, m in rows]


def _after(hits: list[Hit], after: tuple[str, int] | None, want: int) -> list[Hit]:
    """The hits after the (path, line) `after`, at most `want`."""
    if after is not None:
        hits = [h for h in hits if (h.path, h.line) > after]
    return hits[:want]


def _snapshot_loose(
    con: duckdb.DuckDBPyConnection,
    matcher: Matcher,
    where: str,
    params: list[Any],
    want: int,
    budget: Budget,
    after: tuple[str, int] | None,
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
                    if after is not None and key <= after:
                        continue
                    if key not in seen and matcher.loose_hit(line):
                        seen.add(key)
                        hits.append(Hit(path, start + i, line))
    except duckdb.InterruptException:
        budget.hit = True
    hits.sort(key=lambda h: (h.path, h.line))
    return hits[:want]


def read_lines(vault: Vault, rel: str) -> list[str] | None:
    try:
        raw = vault.read_bytes(vault.resolve(rel, match="exact"), MAX_FILE_BYTES + 1)
    except (NotFound, InvalidPath, OSError):
        return None
    if len(raw) > MAX_FILE_BYTES:
        return None
    return [strip_eol(x) for x in split_lines(decode(raw))]


def disk_hits(
    vault: Vault,
    matcher: Matcher,
    paths: list[str],
    want: int,
    budget: Budget,
    after: tuple[str, int] | None = None,
) -> list[Hit]:
    """Hits read from the files themselves (sorted paths), stopping after `want` hits
    (only those after the (path, line) `after`)."""
    hits: list[Hit] = []
    con = duckdb.connect()
    for start in range(0, len(paths), DISK_BATCH_FILES):
        if len(hits) >= want or budget.over():
            break
        batch = paths[start : start + DISK_BATCH_FILES]
        cols: dict[str, list[Any]] = {"path": [], "line_no": [], "line": []}
        for rel in batch:
            lines = read_lines(vault, rel)
            for i, line in enumerate(lines or []):
                if after is not None and (rel, i + 1) <= after:
                    continue
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


def changed_paths(vault: Vault, con: duckdb.DuckDBPyConnection, scope: Scope) -> tuple[list[str], list[str]]:
    """(notes on disk that differ from or are missing in the snapshot, snapshot notes gone from disk)."""
    disk = {e.rel: (e.mtime_ns, e.size) for e in vault.walk() if scope.accepts(e.rel)}
    snap = {p: (m, s) for p, m, s in con.execute("SELECT path, mtime_ns, size FROM notes").fetchall()}
    changed = sorted(p for p, st in disk.items() if snap.get(p) != st)
    gone = sorted(p for p in snap if p not in disk)
    return changed, gone


def iter_scope(vault: Vault, scope: Scope) -> Iterator[str]:
    for entry in vault.walk():
        if scope.accepts(entry.rel):
            yield entry.rel
