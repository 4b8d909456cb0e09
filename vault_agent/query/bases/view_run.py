"""One view run over one snapshot: filter, order, limit, group, summarize, one page of rows.

(The steps and what a row's error does: run.py's module doc.) `ViewRun.answer` is the run
mode's answer; every row is evaluated through a `RowScope` with its own budget, and all the
rows of one request together within MAX_REQUEST_STEPS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from vault_agent.contracts import WarningItem
from vault_agent.errors import InvalidQuery
from vault_agent.paging import json_chars
from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_errors import EvaluationError, ExpressionError
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.models import BaseData, BaseInfo, ColumnInfo, GroupInfo, RowInfo, ViewInfo
from vault_agent.query.bases.row_scope import RowScope, RunContext, ViewError, locate
from vault_agent.query.bases.shapes import PropertyRef
from vault_agent.query.bases.sources import BaseText
from vault_agent.query.bases.summaries import DEFAULT_SUMMARIES
from vault_agent.query.bases.values import FileInfo, Value, truthy
from vault_agent.query.bases.vector import Vectors
from vault_agent.query.bases.vector_sort import sort_arrays
from vault_agent.query.bases.views import (
    RUNNABLE_TYPES,
    CompiledFilter,
    CompiledStatement,
    CompiledView,
    OrderKey,
)
from vault_agent.query.bases.wire_values import is_empty, order_key, to_wire
from vault_agent.query.structured.request import decode_cursor, encode_cursor

MAX_ANSWER_CHARS = 24_000  # rows, groups and summaries of one page (the page ends early past it)
MAX_REQUEST_STEPS = 50_000_000  # evaluation steps of every row of one request together


def view_info(view: Any) -> ViewInfo:
    """A view as listings and answers name it."""
    return ViewInfo(index=view.index, name=view.name, type=view.type, runs=view.type in RUNNABLE_TYPES)


@dataclass(frozen=True)
class Page:
    limit: int
    cursor: str | None
    fingerprint: str
    snapshot_id: int


@dataclass
class _Errors:
    """Rows whose values the interpreter could not compute (counted, the first named)."""

    count: int = 0
    first: str | None = None

    def add(self, err: InvalidQuery) -> None:
        self.count += 1
        if self.first is None:
            self.first = err.message


@dataclass
class ViewRun:
    context: RunContext
    compiled: CompiledView
    vectors: Vectors
    errors: _Errors = field(default_factory=_Errors)
    steps: int = 0

    # ------------------------------------------------------------------ evaluation
    def _budget(self) -> Budget:
        return Budget()

    def _charge(self, budget: Budget) -> None:
        self.steps += budget.steps
        if self.steps > MAX_REQUEST_STEPS:
            raise InvalidQuery(
                f"bases view: running this view takes more than {MAX_REQUEST_STEPS:,} evaluation steps; "
                "narrow its filters"
            )

    def _tree(self, node: CompiledFilter, scope: RowScope, budget: Budget) -> bool:
        if isinstance(node, CompiledStatement):
            try:
                return truthy(evaluate(node.expr, scope, budget=budget))
            except ExpressionError as err:
                raise locate(err, node.source) from None
        if node.op == "and":
            return all(self._tree(item, scope, budget) for item in node.items)
        if node.op == "or":
            return not node.items or any(self._tree(item, scope, budget) for item in node.items)
        return not any(self._tree(item, scope, budget) for item in node.items)

    def _passes(self, position: int) -> bool:
        scope = self.context.scope(position)
        budget = self._budget()
        try:
            return all(self._tree(tree, scope, budget) for tree in self.compiled.filters)
        except ViewError as err:
            if not isinstance(err.original, EvaluationError):
                raise
            self.errors.add(err)
            return False
        finally:
            self._charge(budget)

    def value(self, ref: PropertyRef, scope: RowScope, budget: Budget) -> Value:
        """A property id's value for one row (a row error reads as null, counted)."""
        try:
            return evaluate(_node_of(ref), scope, budget=budget)
        except ViewError as err:
            if not isinstance(err.original, EvaluationError):
                raise
            self.errors.add(err)
            return None
        except EvaluationError as err:
            self.errors.add(err)
            return None

    # ------------------------------------------------------------------ steps
    def matches(self) -> npt.NDArray[np.int64]:
        """Positions of the notes the filters keep, ascending."""
        yes = np.ones(self.vectors.n, np.bool_)
        no = np.zeros(self.vectors.n, np.bool_)
        for tree in self.compiled.filters:  # the global filters, then the view's (as _passes)
            y, n = self.vectors.filter(tree)
            yes, no = yes & y, no | (yes & n)
        unknown = np.flatnonzero(~yes & ~no).tolist()
        kept: list[int] = []
        for batch in _batches(unknown):
            self.context.prefetch(batch)
            kept += [p for p in batch if self._passes(p)]
        return np.union1d(np.flatnonzero(yes), np.asarray(kept, np.int64)).astype(np.int64)

    def _row_values(self, ref: PropertyRef, positions: Sequence[int]) -> list[Value]:
        out: list[Value] = []
        for batch in _batches(list(positions)):
            self.context.prefetch(batch)
            for position in batch:
                budget = self._budget()
                out.append(self.value(ref, self.context.scope(position), budget))
                self._charge(budget)
        return out

    def ordered(self, matched: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], list[Value] | None]:
        """The matches in the view's order, and each one's group value (with groupBy)."""
        group = self.compiled.group
        keys: list[OrderKey] = [*([group] if group else []), *self.compiled.sort]
        columns: list[npt.NDArray[Any]] = []
        group_values: list[Value] | None = None
        for i, key in enumerate(keys):
            fast = None if (group is not None and i == 0) else sort_arrays(self.vectors, key.ref, matched)
            if fast is not None:
                empty, rank, value = fast
                sign = -1 if key.descending else 1
                columns += [empty, sign * rank, sign * value]
                continue
            values = self._row_values(key.ref, matched.tolist())
            if group is not None and i == 0:
                group_values = values
            columns += _value_keys(values, key.descending)
        columns.append(self.context.rows.path_rank()[matched])
        if len(matched) == 0:
            return matched, group_values
        order = np.lexsort(columns[::-1])
        if group_values is not None:
            group_values = [group_values[i] for i in order.tolist()]
        return matched[order], group_values

    # ------------------------------------------------------------------ answer
    def answer(self, base: BaseText, page: Page) -> tuple[BaseData, list[WarningItem]]:
        compiled = self.compiled
        ordered, group_values = self.ordered(self.matches())
        limit = compiled.view.limit
        if limit is not None:
            ordered = ordered[:limit]
            group_values = group_values[:limit] if group_values is not None else None
        total = len(ordered)
        group_of = _group_numbers(group_values) if group_values is not None else None
        positions = ordered.tolist()
        summaries, group_summaries = self._summaries(positions, group_of)
        offset, previous = decode_cursor(page.cursor, page.fingerprint)
        cut = [False]
        out_rows: list[RowInfo] = []
        size = json_chars(summaries or {})
        shown_groups: dict[int, GroupInfo] = {}
        end = offset
        self.context.prefetch(positions[offset : offset + page.limit])
        for index in range(offset, min(offset + page.limit, total)):
            position = positions[index]
            row = self._row(position, group_of[index] if group_of is not None else None, cut)
            group_info = None
            if group_of is not None and group_of[index] not in shown_groups:
                number = group_of[index]
                assert group_values is not None
                group_info = GroupInfo(
                    index=number,
                    value=to_wire(group_values[index], cut),
                    count=group_of.count(number),
                    summaries=group_summaries.get(number) if group_summaries else None,
                )
            grown = size + json_chars(row.model_dump(mode="json"))
            grown += json_chars(group_info.model_dump(mode="json")) if group_info is not None else 0
            if out_rows and grown > MAX_ANSWER_CHARS:
                break
            size = grown
            out_rows.append(row)
            if group_info is not None:
                shown_groups[group_info.index] = group_info
            end = index + 1
        warnings = list(compiled.warnings)
        if previous is not None and previous != page.snapshot_id:
            warnings.append(WarningItem(code="CURSOR_SNAPSHOT_CHANGED",
                                        message="the index changed since the previous page; rows may repeat or skip"))  # fmt: skip
        if end < min(offset + page.limit, total):
            warnings.append(WarningItem(code="RESULTS_TRUNCATED",
                                        message=f"this page stops at {len(out_rows)} rows to stay small; continue with next_cursor"))  # fmt: skip
        if cut[0]:
            warnings.append(WarningItem(code="VALUES_TRUNCATED",
                                        message="some values were cut (text at 1,000 characters, lists at 100 items)"))  # fmt: skip
        if self.errors.count:
            warnings.append(WarningItem(code="ROW_ERRORS",
                                        message=f"{self.errors.count} value(s) could not be computed and read as null "
                                        f"(a row a filter fails on is not shown); the first: {self.errors.first}"))  # fmt: skip
        data = BaseData(
            base=BaseInfo(path=base.address, kind=base.kind),
            view=view_info(compiled.view),
            this=self.context.this.path if self.context.this is not None else None,
            columns=[ColumnInfo(id=c.id, name=c.name) for c in compiled.columns],
            rows=out_rows,
            groups=list(shown_groups.values()) if group_of is not None else None,
            summaries=summaries,
            total=total,
            next_cursor=encode_cursor(end, page.fingerprint, page.snapshot_id) if end < total else None,
            indexFreshness="",
        )
        return data, warnings

    def _row(self, position: int, group: int | None, cut: list[bool]) -> RowInfo:
        scope = self.context.scope(position)
        budget = self._budget()
        values: dict[str, Any] = {}
        for column in self.compiled.columns:
            value = None if column.broken else self.value(column.ref, scope, budget)
            values[column.id] = to_wire(value, cut)
        self._charge(budget)
        return RowInfo(path=scope.file.path, group=group, values=values)

    def _summaries(
        self, positions: list[int], group_of: list[int] | None
    ) -> tuple[dict[str, Any] | None, dict[int, dict[str, Any]]]:
        if not self.compiled.summaries:
            return None, {}
        overall: dict[str, Any] = {}
        per_group: dict[int, dict[str, Any]] = {}
        cut = [False]
        for summary in self.compiled.summaries:
            values = self._row_values(summary.ref, positions)
            overall[summary.property] = to_wire(self._summarize(summary, values), cut)
            if group_of is not None:
                for number in sorted(set(group_of)):
                    chosen = [v for v, g in zip(values, group_of, strict=True) if g == number]
                    per_group.setdefault(number, {})[summary.property] = to_wire(
                        self._summarize(summary, chosen), cut
                    )
        return overall, per_group

    def _summarize(self, summary: Any, values: list[Value]) -> Value:
        if summary.custom is None:
            return DEFAULT_SUMMARIES[summary.name](values)
        budget = self._budget()
        scope = RowScope(self.context, self.context.this or FileInfo(path=""))
        try:
            return evaluate(summary.custom, scope, budget=budget, variables={"values": values})
        except ExpressionError as err:
            assert summary.source is not None
            raise locate(err, summary.source) from None
        finally:
            self._charge(budget)


BATCH = 1_024  # rows whose fields are gathered together


def _batches(positions: list[int]) -> list[list[int]]:
    return [positions[i : i + BATCH] for i in range(0, len(positions), BATCH)]


def _node_of(ref: PropertyRef) -> A.Expr:
    """The expression reading a property id: `file.x`, `note["x"]`, `formula["x"]`."""
    if ref.namespace == "file":
        return A.Member(A.Ident("file"), ref.name)
    return A.Index(A.Ident(ref.namespace), A.Str(ref.name))


def _value_keys(values: list[Value], descending: bool) -> list[npt.NDArray[Any]]:
    """(empty, dense rank) lexsort keys of row values (wire_values.order_key)."""
    empty = np.asarray([1 if is_empty(v) else 0 for v in values], np.int8)
    keyed = [order_key(v) if not is_empty(v) else (9,) for v in values]
    distinct = sorted(set(keyed))
    dense = {k: i for i, k in enumerate(distinct)}
    ranks = np.asarray([dense[k] for k in keyed], np.int64)
    return [empty, -ranks if descending else ranks]


def _group_numbers(values: list[Value]) -> list[int]:
    """Each ordered row's group number: runs of one group value, counted from 0."""
    out: list[int] = []
    previous: object = object()
    number = -1
    for value in values:
        key = (9,) if is_empty(value) else order_key(value)
        if key != previous:
            number += 1
            previous = key
        out.append(number)
    return out
