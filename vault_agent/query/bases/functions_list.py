"""List and object methods (Functions.md "List type", "Object type").

`filter`, `map` and `reduce` evaluate their expression once per element with `value` (the
element) and `index` (its position, from 0) bound, and `reduce` with `acc` (the result so
far, starting at its second argument); the names shadow note properties of the same name
inside that expression only. `flat()` flattens one level (JavaScript's default, the docs'
example). `sort()` orders numbers, then strings, booleans, dates, durations, the rest, null
last. `unique()` keeps the first of equal elements. `mean()`, `median()` and `stddev()`
(population, as the docs' example computes) read the numbers of the list and ignore the
rest; with no number they are null. `contains` matches tags as tags (`file.tags.contains("a")`
holds `#a/b`).
"""

from __future__ import annotations

import math
import statistics

from vault_agent.query.bases.builtins import Context, Table, eager, lazy, want_int, want_list
from vault_agent.query.bases.compare import contains, equals, sort_values
from vault_agent.query.bases.expr_ast import Expr, Position
from vault_agent.query.bases.expr_errors import EvaluationError
from vault_agent.query.bases.values import Value, to_text, truthy, type_name


def _made(ctx: Context, items: list[Value], pos: Position) -> list[Value]:
    ctx.budget.allocate(len(items), pos)
    return items


def _contains(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "contains()", pos)
    ctx.budget.step(len(items), pos)
    return contains(items, args[0])


def _contains_all(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "containsAll()", pos)
    ctx.budget.step(len(items) * len(args), pos)
    return all(contains(items, arg) for arg in args)


def _contains_any(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "containsAny()", pos)
    ctx.budget.step(len(items) * len(args), pos)
    return any(contains(items, arg) for arg in args)


def _filter(ctx: Context, v: Value, args: tuple[Expr, ...], pos: Position) -> Value:
    items = want_list(v, "filter()", pos)
    kept = [
        item
        for i, item in enumerate(items)
        if truthy(ctx.eval_with(args[0], {"value": item, "index": float(i)}))
    ]
    return _made(ctx, kept, pos)


def _map(ctx: Context, v: Value, args: tuple[Expr, ...], pos: Position) -> Value:
    items = want_list(v, "map()", pos)
    ctx.budget.allocate(len(items), pos)
    return [ctx.eval_with(args[0], {"value": item, "index": float(i)}) for i, item in enumerate(items)]


def _reduce(ctx: Context, v: Value, args: tuple[Expr, ...], pos: Position) -> Value:
    items = want_list(v, "reduce()", pos)
    acc = ctx.eval(args[1]) if len(args) > 1 else None
    for i, item in enumerate(items):
        acc = ctx.eval_with(args[0], {"value": item, "index": float(i), "acc": acc})
    return acc


def _flat(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    out: list[Value] = []
    for item in want_list(v, "flat()", pos):
        if isinstance(item, list):
            ctx.budget.allocate(len(item), pos)
            out.extend(item)
        else:
            out.append(item)
    return _made(ctx, out, pos)


def _join(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "join()", pos)
    sep = to_text(args[0]) if args else ","
    text = sep.join(to_text(item) for item in items)
    ctx.budget.allocate(len(text), pos, string=True)
    return text


def _reverse(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return _made(ctx, want_list(v, "reverse()", pos)[::-1], pos)


def _slice(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "slice()", pos)
    start = want_int(args[0], "slice()", pos)
    end = want_int(args[1], "slice()", pos) if len(args) > 1 and args[1] is not None else len(items)
    return _made(ctx, items[start:end], pos)


def _sort(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "sort()", pos)
    ctx.budget.step(len(items) * max(1, int(math.log2(len(items) + 1))), pos)
    return _made(ctx, sort_values(items), pos)


def _unique(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    items = want_list(v, "unique()", pos)
    out: list[Value] = []
    seen: set[tuple[str, object]] = set()
    for item in items:
        if isinstance(item, str | float | bool):
            key = (type(item).__name__, item)
            ctx.budget.step(1, pos)
            if key not in seen:
                seen.add(key)
                out.append(item)
            continue
        ctx.budget.step(len(out) + 1, pos)
        if not any(equals(item, kept) for kept in out):
            out.append(item)
    return _made(ctx, out, pos)


def _numbers(ctx: Context, v: Value, what: str, pos: Position) -> list[float]:
    items = want_list(v, what, pos)
    ctx.budget.step(len(items), pos)
    return [item for item in items if isinstance(item, float) and not math.isnan(item)]


def _mean(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    numbers = _numbers(ctx, v, "mean()", pos)
    return math.fsum(numbers) / len(numbers) if numbers else None


def _median(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    numbers = _numbers(ctx, v, "median()", pos)
    return float(statistics.median(numbers)) if numbers else None


def _stddev(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    numbers = _numbers(ctx, v, "stddev()", pos)
    return float(statistics.pstdev(numbers)) if numbers else None


def _is_empty(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    if isinstance(v, list | dict | str):
        return len(v) == 0
    raise EvaluationError(f"isEmpty() cannot read a {type_name(v)}", pos)


def _object(v: Value, what: str, pos: Position) -> dict[str, Value]:
    if isinstance(v, dict):
        return v
    raise EvaluationError(f"{what} needs an object, not a {type_name(v)}", pos)


def _keys(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return _made(ctx, list[Value](_object(v, "keys()", pos).keys()), pos)


def _values(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return _made(ctx, list(_object(v, "values()", pos).values()), pos)


LIST_METHODS: Table = {
    "contains": eager(1, 1, _contains),
    "containsAll": eager(1, None, _contains_all),
    "containsAny": eager(1, None, _contains_any),
    "filter": lazy(1, 1, _filter),
    "map": lazy(1, 1, _map),
    "reduce": lazy(1, 2, _reduce),
    "flat": eager(0, 0, _flat),
    "isEmpty": eager(0, 0, _is_empty),
    "join": eager(0, 1, _join),
    "reverse": eager(0, 0, _reverse),
    "slice": eager(1, 2, _slice),
    "sort": eager(0, 0, _sort),
    "unique": eager(0, 0, _unique),
    "mean": eager(0, 0, _mean),
    "median": eager(0, 0, _median),
    "stddev": eager(0, 0, _stddev),
}
OBJECT_METHODS: Table = {
    "isEmpty": eager(0, 0, _is_empty),
    "keys": eager(0, 0, _keys),
    "values": eager(0, 0, _values),
}
