"""Global functions (Functions.md "Global").

Choices where the docs are silent: `date(x)` of text that is no date is null (so
`date(due) < today()` is false for a note without a due date), of a date is that date;
`duration(x)` of text that is no duration is null; `number(x)` of text that is no number is
an EvaluationError (the docs: "returns an error"), of null is null; `list(null)` is `[]`;
`max()`/`min()` skip nulls and are null with no number; `file(x)` is null for no such file;
`image()`, `icon()` and `html()` make display-only values (their text is what a view shows:
an image's path or URL, an icon's name, the HTML source, never rendered or executed here);
`random()` is a fresh number per call.
"""

from __future__ import annotations

import html
import math
import random
import re

from vault_agent.query.bases import dates
from vault_agent.query.bases.builtins import Context, EagerFn, Table, eager, lazy, want_str
from vault_agent.query.bases.expr_ast import Expr, Position
from vault_agent.query.bases.expr_errors import EvaluationError
from vault_agent.query.bases.functions_types import target_path
from vault_agent.query.bases.scope import link_from_text
from vault_agent.query.bases.values import (
    DateValue,
    DisplayKind,
    DisplayValue,
    DurationValue,
    FileValue,
    LinkValue,
    Value,
    to_text,
    truthy,
    type_name,
)

_JS_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Infinity")


def _if(ctx: Context, _: Value, args: tuple[Expr, ...], pos: Position) -> Value:
    if truthy(ctx.eval(args[0])):
        return ctx.eval(args[1])
    return ctx.eval(args[2]) if len(args) > 2 else None


def _escape_html(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    text = html.escape(to_text(args[0]), quote=True)
    ctx.budget.allocate(len(text), pos, string=True)
    return text


def _date(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    value = args[0]
    if value is None or isinstance(value, DateValue):
        return value
    if isinstance(value, str | LinkValue):
        return dates.parse_date(to_text(value))
    raise EvaluationError(f"date() reads text, not a {type_name(value)}", pos)


def _duration(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    value = args[0]
    if value is None or isinstance(value, DurationValue):
        return value
    if isinstance(value, float):
        return DurationValue(ms=value)
    return dates.parse_duration(want_str(value, "duration()", pos))


def _file(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    path = target_path(ctx, args[0], ctx.scope.file.path)
    info = ctx.scope.file_info(path) if path is not None else None
    return FileValue(info) if info is not None else None


def _display(kind: DisplayKind) -> EagerFn:
    def make(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
        value = args[0]
        if value is None:
            return None
        if isinstance(value, FileValue):
            return DisplayValue(kind, value.info.path)
        if isinstance(value, LinkValue):
            return DisplayValue(kind, value.path or value.target)
        return DisplayValue(kind, to_text(value))

    return make


def _link(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    value, display = args[0], args[1] if len(args) > 1 else None
    if value is None:
        return None
    if isinstance(value, FileValue):
        return LinkValue(value.info.path, value.info.path, display)
    if isinstance(value, LinkValue):
        return LinkValue(value.target, value.path, display if len(args) > 1 else value.display)
    link = link_from_text(to_text(value), ctx.scope.file.path, ctx.scope)
    return LinkValue(link.target, link.path, display if len(args) > 1 else link.display)


def _list(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    value = args[0]
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _numbers(args: list[Value], what: str, pos: Position) -> list[float]:
    out: list[float] = []
    for arg in args:
        if arg is None:
            continue
        if not isinstance(arg, float):
            raise EvaluationError(f"{what} takes numbers, not a {type_name(arg)}", pos)
        out.append(arg)
    return out


def _max(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    numbers = _numbers(args, "max()", pos)
    return (math.nan if any(map(math.isnan, numbers)) else max(numbers)) if numbers else None


def _min(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    numbers = _numbers(args, "min()", pos)
    return (math.nan if any(map(math.isnan, numbers)) else min(numbers)) if numbers else None


def _now(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    return DateValue(ctx.scope.now(), True)


def _today(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    return dates.start_of_day(ctx.scope.now())


def _number(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    value = args[0]
    if value is None or isinstance(value, float):
        return value
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, DateValue):
        return dates.epoch_ms(value)
    if isinstance(value, DurationValue):
        return value.total_ms()
    if isinstance(value, str) and _JS_NUMBER.fullmatch(value.strip()):
        return float(value.strip().replace("Infinity", "inf"))
    raise EvaluationError(f"number() cannot read this {type_name(value)} as a number", pos)


def _random(ctx: Context, _: Value, args: list[Value], pos: Position) -> Value:
    return random.random()


GLOBALS: Table = {
    "if": lazy(2, 3, _if),
    "escapeHTML": eager(1, 1, _escape_html),
    "date": eager(1, 1, _date),
    "duration": eager(1, 1, _duration),
    "file": eager(1, 1, _file),
    "html": eager(1, 1, _display("html")),
    "image": eager(1, 1, _display("image")),
    "icon": eager(1, 1, _display("icon")),
    "link": eager(1, 2, _link),
    "list": eager(1, 1, _list),
    "max": eager(0, None, _max),
    "min": eager(0, None, _min),
    "now": eager(0, 0, _now),
    "today": eager(0, 0, _today),
    "number": eager(1, 1, _number),
    "random": eager(0, 0, _random),
}
