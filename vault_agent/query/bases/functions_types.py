"""Methods of any value, numbers, dates, links and files (Functions.md), and every type's fields.

Numbers: `round()` is JavaScript's `Math.round` (halves up: `(2.5).round()` is 3,
`(-2.5).round()` is -2), `round(d)` rounds at `d` decimals the same way; `toFixed(p)`
rounds the exact binary value half away from zero as JavaScript does (`(2.5).toFixed(0)` is
"3"), `p` in 0–100. `isEmpty()` is true only for null (and an empty string, list or object).

Files: `hasLink(x)` is true when the file links or embeds `x` (a file, a link, or a path or
link text resolved from the file); `hasTag(…)` matches nested tags case-insensitively with
or without `#`; `inFolder(f)` is true in `f` and its sub-folders (letter case as written,
as vault_query's folder filter; `inFolder("")` and `inFolder("/")` hold every file).
A file's unknown field reads its note property (`this.topics`; `this.note.x` too), except on the row's own
`file`, where support.py refuses it before evaluation (`file.status` is a mistake for `status`).
"""

from __future__ import annotations

import decimal
import math

from vault_agent.query.bases import dates
from vault_agent.query.bases.builtins import Context, Table, eager, want_int, want_number, want_str
from vault_agent.query.bases.expr_ast import Position
from vault_agent.query.bases.expr_errors import EvaluationError
from vault_agent.query.bases.moment_format import format_date, relative
from vault_agent.query.bases.scope import all_properties, find_key, link_from_text, property_value
from vault_agent.query.bases.values import (
    DateValue,
    DisplayValue,
    DurationValue,
    FileInfo,
    FileValue,
    LinkValue,
    TagText,
    Value,
    tag_matches,
    to_text,
    truthy,
    type_name,
)

FILE_FIELDS = ("name", "basename", "path", "folder", "ext", "size", "ctime", "mtime", "tags", "links", "embeds",
               "backlinks", "properties", "file")  # fmt: skip
_TYPE_ALIASES = {"regex": "regexp", "text": "string", "bool": "boolean", "array": "list"}


# ---------------------------------------------------------------- any value
def _is_truthy(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return truthy(v)


def _is_type(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    wanted = want_str(args[0], "isType()", pos).strip().lower()
    return type_name(v) == _TYPE_ALIASES.get(wanted, wanted)


def _to_string(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    text = to_text(v)
    ctx.budget.allocate(len(text), pos, string=True)
    return text


def _is_empty(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    if v is None:
        return True
    return len(v) == 0 if isinstance(v, str | list | dict) else False


ANY_METHODS: Table = {
    "isTruthy": eager(0, 0, _is_truthy),
    "isType": eager(1, 1, _is_type),
    "toString": eager(0, 0, _to_string),
    "isEmpty": eager(0, 0, _is_empty),
}


# ---------------------------------------------------------------- numbers
def js_round(x: float) -> float:
    """JavaScript's Math.round: the nearest integer, halves toward +∞."""
    if not math.isfinite(x):
        return x
    whole = math.floor(x)
    return float(whole + 1 if x - whole >= 0.5 else whole)


def _abs(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return abs(want_number(v, "abs()", pos))


def _ceil(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    x = want_number(v, "ceil()", pos)
    return float(math.ceil(x)) if math.isfinite(x) else x


def _floor(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    x = want_number(v, "floor()", pos)
    return float(math.floor(x)) if math.isfinite(x) else x


def _round(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    x = want_number(v, "round()", pos)
    if not args or args[0] is None:
        return js_round(x)
    digits = max(0, min(want_int(args[0], "round()", pos), 100))
    scale = 10.0**digits
    scaled = x * scale
    return js_round(scaled) / scale if math.isfinite(scaled) else x


def _to_fixed(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    x = want_number(v, "toFixed()", pos)
    digits = want_int(args[0], "toFixed()", pos) if args and args[0] is not None else 0
    if not 0 <= digits <= 100:
        raise EvaluationError("toFixed() takes 0 to 100 digits", pos)
    if not math.isfinite(x) or abs(x) >= 1e21:
        return to_text(x)
    exact = decimal.Decimal(abs(x)).quantize(
        decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP
    )
    text = f"{exact:f}"
    return "-" + text if x < 0 and exact != 0 else text


NUMBER_METHODS: Table = {
    "abs": eager(0, 0, _abs),
    "ceil": eager(0, 0, _ceil),
    "floor": eager(0, 0, _floor),
    "round": eager(0, 1, _round),
    "toFixed": eager(0, 1, _to_fixed),
}


# ---------------------------------------------------------------- dates
def _date_of(v: Value, what: str, pos: Position) -> DateValue:
    if isinstance(v, DateValue):
        return v
    raise EvaluationError(f"{what} needs a date, not a {type_name(v)}", pos)


def _date_only(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return dates.start_of_day(_date_of(v, "date()", pos).moment)


def _time(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    m = _date_of(v, "time()", pos).moment
    return f"{m.hour:02d}:{m.minute:02d}:{m.second:02d}"


def _format(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    pattern = want_str(args[0], "format()", pos)
    ctx.budget.allocate(len(pattern) * 4, pos, string=True)
    return format_date(_date_of(v, "format()", pos), pattern)


def _relative(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    return relative(_date_of(v, "relative()", pos), ctx.scope.now())


DATE_METHODS: Table = {
    "date": eager(0, 0, _date_only),
    "time": eager(0, 0, _time),
    "format": eager(1, 1, _format),
    "relative": eager(0, 0, _relative),
}


# ---------------------------------------------------------------- links
def _link_of(v: Value, what: str, pos: Position) -> LinkValue:
    if isinstance(v, LinkValue):
        return v
    raise EvaluationError(f"{what} needs a link, not a {type_name(v)}", pos)


def _as_file(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    link = _link_of(v, "asFile()", pos)
    info = ctx.scope.file_info(link.path) if link.path is not None else None
    return FileValue(info) if info is not None else None


def target_path(ctx: Context, other: Value, source: str) -> str | None:
    """The vault path a file, a link or a path/link text names, seen from `source`."""
    if isinstance(other, FileValue):
        return other.info.path
    if isinstance(other, LinkValue):
        return other.path
    if isinstance(other, str):
        if ctx.scope.file_info(other) is not None:
            return other
        return link_from_text(other, source, ctx.scope).path
    return None


def _links_of(info: FileInfo, wanted: str | None) -> bool:
    return wanted is not None and any(ref.path == wanted for ref in (*info.links, *info.embeds))


def _links_to(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    link = _link_of(v, "linksTo()", pos)
    info = ctx.scope.file_info(link.path) if link.path is not None else None
    if info is None:
        return False
    ctx.budget.step(len(info.links) + len(info.embeds), pos)
    return _links_of(info, target_path(ctx, args[0], info.path))


LINK_METHODS: Table = {"asFile": eager(0, 0, _as_file), "linksTo": eager(1, 1, _links_to)}


# ---------------------------------------------------------------- files
def _file_of(v: Value, what: str, pos: Position) -> FileInfo:
    if isinstance(v, FileValue):
        return v.info
    raise EvaluationError(f"{what} needs a file, not a {type_name(v)}", pos)


def _as_link(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    info = _file_of(v, "asLink()", pos)
    return LinkValue(info.path, info.path, args[0] if args else None)


def _has_link(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    info = _file_of(v, "hasLink()", pos)
    ctx.budget.step(1 + len(info.links) + len(info.embeds), pos)
    return _links_of(info, target_path(ctx, args[0], info.path))


def _has_property(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    info = _file_of(v, "hasProperty()", pos)
    return find_key(info.properties, want_str(args[0], "hasProperty()", pos)) is not None


def _has_tag(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    info = _file_of(v, "hasTag()", pos)
    wanted = [want_str(arg, "hasTag()", pos) for arg in args if arg is not None]
    ctx.budget.step(1 + len(info.tags) * len(wanted), pos)
    return any(tag_matches(tag, want) for tag in info.tags for want in wanted)


def in_folder(path: str, folder: str) -> bool:
    """`path` is inside `folder` or one of its sub-folders (the root holds everything)."""
    folder = folder.strip().strip("/")
    return not folder or path.startswith(folder + "/")


def _in_folder(ctx: Context, v: Value, args: list[Value], pos: Position) -> Value:
    info = _file_of(v, "inFolder()", pos)
    folder = args[0] if args else None
    return True if folder is None else in_folder(info.path, want_str(folder, "inFolder()", pos))


FILE_METHODS: Table = {
    "asLink": eager(0, 1, _as_link),
    "hasLink": eager(1, 1, _has_link),
    "hasProperty": eager(1, 1, _has_property),
    "hasTag": eager(1, None, _has_tag),
    "inFolder": eager(0, 1, _in_folder),
}


# ---------------------------------------------------------------- fields
def file_field(ctx: Context, info: FileInfo, name: str) -> Value:
    """A file's field (FILE_FIELDS), else its note property of that name."""
    if name in ("name", "basename", "path", "folder", "ext"):
        texts = {"name": info.name, "basename": info.basename, "path": info.path, "folder": info.folder}
        return texts.get(name, info.ext)
    if name == "size":
        return float(info.size)
    if name in ("ctime", "mtime"):
        moment = info.ctime if name == "ctime" else info.mtime
        return None if moment is None else DateValue(moment, True)
    if name == "tags":
        return [TagText(tag) for tag in info.tags]
    if name in ("links", "embeds"):
        return [LinkValue(ref.target, ref.path) for ref in (info.links if name == "links" else info.embeds)]
    if name == "backlinks":
        paths = ctx.scope.backlinks(info.path)
        ctx.budget.allocate(len(paths))
        return [LinkValue(path, path) for path in paths]
    if name in ("properties", "note"):  # `this.note.x` reads like `note.x` of the row
        return dict[str, Value](all_properties(info, ctx.scope))
    if name == "file":
        return FileValue(info)
    return property_value(info, name, ctx.scope)


def field_of(ctx: Context, value: Value, name: str, pos: Position) -> Value:
    """`value.name`: a field of the value's type, an object's key, or null on null.

    Raises:
        EvaluationError: the type has no such field.
    """
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    if isinstance(value, FileValue):
        return file_field(ctx, value.info, name)
    if name == "length" and isinstance(value, str | list | LinkValue | DisplayValue):
        return float(len(value if isinstance(value, str | list) else to_text(value)))
    if isinstance(value, DateValue) and name in dates.DATE_FIELDS:
        return dates.date_field(value, name)
    if isinstance(value, DurationValue) and name in dates.DURATION_FIELDS:
        return dates.duration_field(value, name)
    raise EvaluationError(f"a {type_name(value)} has no field '{name}'", pos)
