"""`vault_query`: notes selected by tags, properties, dates, folders and links, or by a
Dataview query, from one pinned snapshot (SPEC "Structured queries", docs/query.md).

One request: compile (filters or DQL → plan), pin the snapshot, render the plan's SQL, read
one page (sorted, `limit` from the cursor's offset) and the count of all matches, rebuild
the page's properties, evaluate DQL columns. Work is bounded by a time budget (then the
answer is `PARTIAL`) and the answer by a size bound (then the page ends early and
`next_cursor` continues it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import InvalidParameter, InvalidQuery
from vault_agent.property_values import iso_of_micros
from vault_agent.query.structured import columnar
from vault_agent.query.structured.display import NoteContext, rebuild, referenced, to_json
from vault_agent.query.structured.dql_compile import compile_dql
from vault_agent.query.structured.evaluate import Evaluator
from vault_agent.query.structured.filters import compile_filters
from vault_agent.query.structured.links import Links
from vault_agent.query.structured.plan import AndP, LinkP, NotP, OrP, Plan, Pred, PropCmp, TrueP
from vault_agent.query.structured.relations import (
    attach,
    dead_by_segment,
    live_notes,
    page_notes,
    segment_files,
)
from vault_agent.query.structured.request import (
    QueryData,
    QueryRequest,
    QueryResult,
    decode_cursor,
    encode_cursor,
)
from vault_agent.query.structured.sql import SqlBuilder, mismatch_sql, on_columns_only, unique_paths
from vault_agent.query.structured.values import Clock, system_clock
from vault_agent.query.structured.warnings import PARTIAL, data_mismatch_warning
from vault_agent.query.tasks.dql_task import is_task_query, vault_query_tasks

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader, SnapshotView

# The request and answer models are request.py's; api/ops/query.py names them through here.
__all__ = ["QueryData", "QueryRequest", "QueryResult", "vault_query"]

QUERY_LIMIT_DEFAULT = 50
QUERY_LIMIT_MAX = 500
TIME_BUDGET_S = 10.0
MAX_ANSWER_CHARS = 200_000  # the page ends early past this (RESULTS_TRUNCATED, next_cursor)


class Deadline:
    """The request's time budget: one timer interrupts the request's cursor when it ends
    (a timer per statement cost a thread start each); later statements are not run."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seconds: float) -> None:
        self.con = con
        self.hit = seconds <= 0
        self.end = time.monotonic() + seconds
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True

    def _expire(self) -> None:
        self.hit = True
        self.con.interrupt()

    def __enter__(self) -> Deadline:
        if not self.hit:
            self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def spent(self) -> bool:
        """Whether the budget is spent (work done outside DuckDB checks it by the clock)."""
        self.hit = self.hit or time.monotonic() >= self.end
        return self.hit

    def rows(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]] | None:
        """The statement's rows, or None once the budget is spent."""
        if self.hit:
            return None
        try:
            return self.con.execute(sql, params).fetchall()
        except duckdb.InterruptException:
            self.hit = True
            return None


def _link_resolver(links: Links) -> Callable[[LinkP], list[str]]:
    def resolve(pred: LinkP) -> list[str]:
        return links.linking_to(pred.target) if pred.direction == "to" else links.linked_from(pred.target)

    return resolve


def _ordering_comparisons(pred: Pred) -> list[PropCmp]:
    """The typed property comparisons (< <= > >=) of a plan, for mismatch warnings."""
    if isinstance(pred, PropCmp):
        return [pred] if pred.op != "=" else []
    if isinstance(pred, AndP | OrP):
        return [c for item in pred.items for c in _ordering_comparisons(item)]
    if isinstance(pred, NotP):
        return _ordering_comparisons(pred.item)
    return []


def _getter(table: dict[str, list[str]], path: str) -> Callable[[], list[str]]:
    return lambda: table.get(path, [])


def _rebuilt(rows: list[tuple[Any, ...]]) -> dict[str, dict[str, Any]]:
    """Typed values per path of props rows (path, key, item, is_list, kind, s, n, d, b)."""
    by_path: dict[str, list[Any]] = {}
    for row in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        by_path.setdefault(row[0], []).append(row[1:])
    return {p: rebuild(r) for p, r in by_path.items()}


class _Run:
    """One request against one pinned snapshot."""

    def __init__(
        self,
        reader: SnapshotReader,
        view: SnapshotView,
        plan: Plan,
        cache: dict[Any, Any] | None,
        clock: Clock,
        budget: Deadline,
    ) -> None:
        self.reader = reader
        self.view = view
        self.con = view.con
        self.plan = plan
        self.clock = clock
        self.budget = budget
        self.links = Links(view, cache)
        self.warnings: list[WarningItem] = [WarningItem(code=c, message=m) for c, m in plan.warnings]
        self.columns: columnar.Columns | None = None
        self.positions: dict[str, int] | None = None  # the page's notes' positions (in memory)
        self._attached = False

    def attached(self) -> None:
        """The SQL relations (relations.attach) on the request's cursor, once."""
        if not self._attached and not self.budget.hit:
            try:
                attach(self.reader, self.view)
            except duckdb.InterruptException:  # the budget ended: no statement runs after it
                self.budget.hit = True
            self._attached = True

    def in_memory(self, notes: pa.Table) -> npt.NDArray[np.int64] | None:
        """The matches' positions in `notes`, in order, answered from the snapshot's
        columns (columnar.py); None when the plan needs SQL."""
        if self.budget.spent():
            return None
        answerable = columnar.answerable(self.plan.where)
        # a plan SQL answers still takes its page's values from columns already built
        self.columns = columnar.columns_of(self.reader, self.view, notes, build=answerable)
        if self.columns is None or not answerable:
            return None
        mask = columnar.mask_of(self.columns, self.plan.where)
        found = None if mask is None else columnar.ordered(self.columns, self.plan, mask)
        return None if self.budget.spent() else found

    def sql(self) -> tuple[str, list[Any], str, list[Any]]:
        """(page SQL, its params, count SQL, its params). The matches are one set, built
        once per statement (a materialized CTE); the page statement answers the page's
        paths in order with the count of all matches. It reads the notes' columns only
        when it sorts by one of them. A query on the notes' own columns alone (or none)
        is one scan of them, no set."""
        where_sql = SqlBuilder(_link_resolver(self.links))
        order_sql = SqlBuilder(_link_resolver(self.links))
        by_columns = any(k.file and k.key != "path" for k in self.plan.sort)
        if on_columns_only(self.plan.where):
            cond = where_sql.on_columns(self.plan.where) if not isinstance(self.plan.where, TrueP) else "true"
            joins, order = order_sql.order(self.plan.sort, path="n.path")
            count = f"SELECT count(*) FROM q_notes n WHERE {cond}"
            page = f"SELECT n.path, ({count}) FROM q_notes n {joins} WHERE {cond} ORDER BY {order} LIMIT ? OFFSET ?"
            return page, [*where_sql.params, *order_sql.params, *where_sql.params], count, where_sql.params
        distinct = "" if unique_paths(self.plan.where) else "DISTINCT "
        matches = (
            f"WITH m AS MATERIALIZED (SELECT {distinct}path FROM ({where_sql.matches(self.plan.where)})) "
        )
        joins, order = order_sql.order(self.plan.sort, path="n.path" if by_columns else "m.path")
        source = "m JOIN q_notes n ON n.path = m.path" if by_columns else "m"
        page = f"{matches}SELECT m.path, (SELECT count(*) FROM m) FROM {source} {joins} ORDER BY {order} LIMIT ? OFFSET ?"
        return (
            page,
            [*where_sql.params, *order_sql.params],
            f"{matches}SELECT count(*) FROM m",
            where_sql.params,
        )

    def mismatches(self) -> None:
        seen: set[tuple[str, str]] = set()
        for cmp in _ordering_comparisons(self.plan.where):
            found = mismatch_sql(cmp.key, cmp.value)
            if found is None or (cmp.key, cmp.value.kind) in seen:
                continue
            seen.add((cmp.key, cmp.value.kind))
            count = (
                columnar.mismatched(self.columns, cmp.key, cmp.value) if self.columns is not None else None
            )
            if count is None:
                self.attached()
                rows = self.budget.rows(*found)
                count = int(rows[0][0]) if rows else None
            if count:
                code, message = data_mismatch_warning(cmp.key, cmp.value, count)
                self.warnings.append(WarningItem(code=code, message=message))

    def properties(self, notes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Typed property values of the page's notes, for the keys the columns read (and
        the children of those that are maps), each note's from the file of the segment
        holding its live rows (an older segment's file may still hold its dead ones)."""
        keys = sorted({c.key for c in self.plan.columns if c.key is not None}
                      | referenced(c.expr for c in self.plan.columns if c.expr is not None)[0])  # fmt: skip
        if not keys or not notes:
            return {}
        if self.columns is not None and self.positions is not None:
            found = columnar.page_rows(
                self.columns, {self.positions[n["path"]]: n["path"] for n in notes}, keys
            )
            if found is not None:
                return _rebuilt(found)
        self.attached()
        by_seg: dict[int, list[str]] = {}
        for note in notes:
            by_seg.setdefault(int(note["seg"]), []).append(note["path"])
        columns = "path, key, item, is_list, kind, s, n, d, b"

        def select(where_key: str, key_params: list[Any]) -> tuple[str, list[Any]]:
            # Constant IN lists (not subqueries): pushed into each Parquet scan, whose
            # key-sorted row groups are then skipped by their statistics.
            parts, params = [], []
            for seg, paths in sorted(by_seg.items()):
                (file,) = segment_files(self.reader, self.view, "props", {seg})
                marks = ", ".join("?" * len(paths))
                literal = "'" + file.replace("'", "''") + "'"
                parts.append(
                    f"SELECT {columns} FROM read_parquet({literal}) WHERE {where_key} AND path IN ({marks})"
                )
                params += [*key_params, *paths]
            return " UNION ALL ".join(parts), params

        rows = self.budget.rows(*select(f"key IN ({', '.join('?' * len(keys))})", keys)) or []
        maps = sorted({r[1] for r in rows if r[4] == "object"})
        if maps:  # a map's keys are `parent.child` rows (only when one was selected)
            rows += (
                self.budget.rows(
                    *select(
                        "len(list_filter(?::VARCHAR[], lambda k: starts_with(key, k || '.'))) > 0", [maps]
                    )
                )
                or []
            )
        return _rebuilt(rows)

    def results(self, notes: list[dict[str, Any]]) -> tuple[list[QueryResult], bool]:
        """The page's results; whether the size bound cut the page (values or results)."""
        paths = [n["path"] for n in notes]
        props = self.properties(notes)
        exprs = [c for c in self.plan.columns if c.expr is not None]
        files = referenced(c.expr for c in exprs)[1]
        outlinks = self.links.outlinks(paths) if "outlinks" in files else {}
        inlinks = self.links.inlinks(paths) if "inlinks" in files else {}
        out: list[QueryResult] = []
        cut = [False]
        size = 0
        for note in notes:
            path, title, tags, mtime_ns = note["path"], note["title"], note["all_tags"], note["mtime_ns"]
            values = props.get(path, {})
            shown: dict[str, Any] = {}
            if exprs:
                ctx = NoteContext(
                    path=path, folder=note["folder"], title=title, size=int(note["size"] or 0),
                    mtime_us=int(mtime_ns) // 1000, ctime_us=int(note["ctime_ns"]) // 1000, tags=list(tags or []),
                    aliases=list(note["aliases"] or []), props=values,
                    outlinks=_getter(outlinks, path), inlinks=_getter(inlinks, path),
                )  # fmt: skip
                evaluator = Evaluator(ctx, self.clock)
            for col in self.plan.columns:
                value = values.get(col.key) if col.key is not None else evaluator.value(col.expr)
                shown[col.header] = to_json(value, cut)
            result = QueryResult(
                path=path,
                title=title or "",
                tags=list(tags or []),
                mtime=iso_of_micros(int(mtime_ns) // 1000),
                properties=shown,
            )
            size += len(result.model_dump_json())
            if out and size > MAX_ANSWER_CHARS:
                return out, True
            out.append(result)
        if cut[0]:
            self.warnings.append(
                WarningItem(
                    code="VALUES_TRUNCATED",
                    message="some property values were cut (text at 1,000 characters, lists at 100 items)",
                )
            )
        return out, False


def vault_query(
    reader: SnapshotReader,
    request: QueryRequest,
    *,
    cache: dict[Any, Any] | None = None,
    clock: Clock = system_clock,
    time_budget_s: float = TIME_BUDGET_S,
) -> Outcome[QueryData]:
    """Notes matching the filters (AND) or the DQL query, one page of them, from one snapshot.

    Raises:
        InvalidQuery: a malformed or unsupported filter or DQL query, or both given.
        InvalidParameter: limit outside 1–500, a bad glob or cursor.
        InvalidPath: a folder outside the vault.
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    limit = QUERY_LIMIT_DEFAULT if request.limit is None else request.limit
    if not 1 <= limit <= QUERY_LIMIT_MAX:
        raise InvalidParameter.about("limit", f"must be from 1 to {QUERY_LIMIT_MAX}")
    if request.dql is not None:
        if request.filters.given():
            raise InvalidQuery(
                "dql is exclusive with the filters: put every condition in the query, or use the filters alone"
            )
        if is_task_query(request.dql):  # TASK: the tasks of the same snapshot (query/tasks)
            return vault_query_tasks(reader, request, limit, clock)
        plan = compile_dql(request.dql, clock)
    else:
        plan = compile_filters(request.filters, clock)
    fingerprint = request.fingerprint()
    offset, cursor_snapshot = decode_cursor(request.cursor, fingerprint)
    with reader.acquire() as view:
        notes = live_notes(
            reader, view, dead_by_segment(view)
        )  # before the budget: its cost does not depend on the query
        with Deadline(view.con, time_budget_s) as budget:
            run = _Run(reader, view, plan, cache, clock, budget)
            return _answer(run, notes, _Page(limit, offset, cursor_snapshot, fingerprint), time_budget_s)


@dataclass(frozen=True)
class _Page:
    limit: int
    offset: int
    cursor_snapshot: int | None  # the snapshot of the previous page (its cursor's)
    fingerprint: str


def _answer(run: _Run, notes: pa.Table, page: _Page, time_budget_s: float) -> Outcome[QueryData]:
    """The answer of one request from its pinned snapshot (see vault_query)."""
    view, plan, budget = run.view, run.plan, run.budget
    limit, offset, fingerprint = page.limit, page.offset, page.fingerprint
    snapshot_id = view.manifest.snapshot_id
    warnings = [*view.warnings()]
    if page.cursor_snapshot is not None and page.cursor_snapshot != snapshot_id:
        warnings.append(
            WarningItem(
                code="CURSOR_SNAPSHOT_CHANGED",
                message="the index changed since the previous page; results may repeat or skip a note",
            )
        )
    cap = limit if plan.limit is None else max(0, min(limit, plan.limit - offset))
    matches = run.in_memory(notes)
    total: int | None
    if matches is not None:
        chosen = matches[offset : offset + cap]
        rows = notes.take(pa.array(chosen, pa.int64())).to_pylist()
        run.positions = {row["path"]: int(p) for row, p in zip(rows, chosen.tolist(), strict=True)}
        total = len(matches)
    else:
        run.attached()
        page_sql, params, count_sql, count_params = run.sql()
        found = budget.rows(page_sql, [*params, cap, offset]) if cap else None
        rows = page_notes(notes, [r[0] for r in found or []])
        if found:
            total = int(found[0][-1])
        else:  # no page (past the end, or DQL's LIMIT reached): the count alone
            counted = budget.rows(count_sql, count_params)
            total = int(counted[0][0]) if counted else None
    if total is not None and plan.limit is not None:
        total = min(total, plan.limit)
    run.mismatches()
    results, short = run.results(rows) if not budget.hit else ([], False)
    end = offset + len(results)
    more = short or (total is not None and end < total)
    if short:
        warnings.append(
            WarningItem(
                code="RESULTS_TRUNCATED",
                message=f"this page stops at {len(results)} results to stay small; continue with next_cursor",
            )
        )
    if budget.hit:
        warnings.append(
            WarningItem(
                code=PARTIAL,
                message=f"the query stopped at its {time_budget_s:g} s time budget; the answer is partial: "
                "narrow it (folder, tags, a property) or sort by path",
            )
        )
        results, total, more = [], None, False
    data = QueryData(
        results=results,
        total=total,
        next_cursor=encode_cursor(end, fingerprint, snapshot_id) if more and results else None,
        indexFreshness=view.freshness,
    )
    return Outcome(data=data, warnings=[*warnings, *run.warnings], freshness=view.freshness)
