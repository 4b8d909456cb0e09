"""Parameter names as each surface spells them, and the one wording of a bad parameter.

A message about a parameter names it the way the caller wrote it (issue 23, "one voice"):

- MCP: the params model's field names, dotted into nested objects (`range.start_line`),
  `[i]` for a list item (`cited_ranges[0].start_line`);
- HTTP: the name the request used, snake_case or its alias (`q`, `relativeDir`), else the
  alias (what docs/http-api.md lists);
- CLI: the flag that sets it (`--start`), the positional argument (`PATH`), or for an object
  the flags of its fields (`--start/--end`).

Everything here is derived from each operation's own declarations (params models, their
aliases, `Operation.cli_args` and `cli_options`); nothing is written per tool. Core code
writes messages with MCP names, quoted (`parameter 'limit' must be …`, `'full'`);
`reword` renames them for the surface that was called (tool names in a message are the
transports' business: `hints.py`). Validation errors of the params
models are worded here from their schema (`tool_schema.constraint_schema`), so a
validation library's own wording never reaches a caller, and no value is ever echoed.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from vault_agent.api.operation import CliOption, Operation
from vault_agent.api.param_text import field_info, nested_model
from vault_agent.api.tool_schema import constraint_schema
from vault_agent.errors import (
    InvalidLimit,
    InvalidParameter,
    TooLarge,
    VaultAgentError,
    range_text,
)

Surface = Literal["mcp", "http", "cli"]
Path = tuple[str | int, ...]
# Errors whose words may name parameters (others name paths, states or tools, never parameters).
PARAMETER_ERRORS: tuple[type[VaultAgentError], ...] = (InvalidParameter, InvalidLimit, TooLarge)


# ----------------------------------------------------------------------------- CLI flags
def py_type(annotation: Any) -> type:
    for alt in [annotation, *get_args(annotation)]:
        if alt in (int, float, bool, str):
            return alt  # type: ignore[no-any-return]
        if get_origin(alt) is Literal:
            return str
    return str


def _is_scalar(annotation: Any) -> bool:
    alts = [a for a in (get_args(annotation) or (annotation,)) if a is not type(None)]
    return all(a in (int, float, bool, str) or get_origin(a) is Literal for a in alts)


def cli_options(op: Operation) -> list[CliOption]:
    """The CLI flags of an operation: declared options, else every top-level scalar field
    not taken positionally (`--field-name`)."""
    if op.cli_options:
        return list(op.cli_options)
    out = []
    for name, info in op.params.model_fields.items():
        if name in op.cli_args or not _is_scalar(info.annotation):
            continue
        out.append(
            CliOption(
                flag="--" + name.replace("_", "-"),
                target=name,
                type=py_type(info.annotation),
                help=(info.description or "").strip(),
            )
        )
    return out


# ----------------------------------------------------------------------------- labels
def mcp_name(path: Path) -> str:
    """`range.start_line`, `cited_ranges[0].start_line`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _http_name(model: type[BaseModel], path: Path, raw: Any) -> str:
    out = ""
    node_model: type[BaseModel] | None = model
    node_raw = raw
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            node_raw = node_raw[part] if isinstance(node_raw, list) and part < len(node_raw) else None
            continue
        info = field_info(node_model, part)
        alias = (info.alias if info is not None else None) or part
        spelled = part if isinstance(node_raw, dict) and part in node_raw else alias
        out += f".{spelled}" if out else spelled
        node_raw = node_raw.get(spelled) if isinstance(node_raw, dict) else None
        node_model = nested_model(info.annotation) if info is not None else None
    return out


def _cli_label(op: Operation, path: Path) -> tuple[str, str] | None:
    dotted = ".".join(str(p) for p in path if not isinstance(p, int))
    options = cli_options(op)
    for opt in options:
        if opt.target == dotted:
            return f"option {opt.flag}", opt.flag
    if len(path) == 1 and dotted in op.cli_args:
        return f"argument {dotted.upper()}", dotted.upper()
    for opt in options:  # inside an object or list a flag sets as a whole (--range 12-20)
        if dotted.startswith(opt.target + "."):
            return f"option {opt.flag}", opt.flag
    inner = [opt.flag for opt in options if opt.target.startswith(dotted + ".")]
    if inner:  # an object whose fields have flags of their own (range → --start/--end)
        joined = "/".join(inner)
        return f"options {joined}", joined
    return None


def label(op: Operation, path: Path, surface: Surface, raw: Any = None) -> tuple[str, str]:
    """(`parameter 'q'` | `option --limit` | `argument PATH`, and the short form `'q'` | `--limit`)."""
    if surface == "cli" and (found := _cli_label(op, path)) is not None:
        return found
    name = _http_name(op.params, path, raw) if surface == "http" else mcp_name(path)
    return f"parameter '{name}'", f"'{name}'"


# ----------------------------------------------------------------------------- wording
@cache
def _schema(params: type[BaseModel]) -> dict[str, Any]:
    return constraint_schema(params)


def _node(schema: dict[str, Any], path: Path) -> dict[str, Any]:
    node: Any = schema
    for part in path:
        if not isinstance(node, dict):
            return {}
        node = node.get("items") if isinstance(part, int) else node.get("properties", {}).get(part)
    return node if isinstance(node, dict) else {}


_NUMBER_ERRORS = frozenset(
    {
        "int_parsing", "int_type", "int_from_float", "float_parsing", "float_type", "finite_number",
        "greater_than", "greater_than_equal", "less_than", "less_than_equal", "multiple_of",
    }
)  # fmt: skip
_OBJECT_ERRORS = frozenset({"model_type", "dict_type", "model_attributes_type"})


def _bounds(node: dict[str, Any]) -> tuple[int | None, int | None]:
    low, high = node.get("minimum"), node.get("maximum")
    if low is None and isinstance(node.get("exclusiveMinimum"), int):
        low = node["exclusiveMinimum"] + 1
    if high is None and isinstance(node.get("exclusiveMaximum"), int):
        high = node["exclusiveMaximum"] - 1
    return low, high


def problem(kind: str, node: dict[str, Any]) -> str:
    """What is wrong, in our words, from a validation error type and the parameter's schema."""
    if kind == "missing":
        return "is required"
    if kind in _NUMBER_ERRORS:
        what = "an integer" if node.get("type") == "integer" else "a number"
        return f"must be {what} {range_text(*_bounds(node))}".rstrip()
    if kind in ("bool_parsing", "bool_type"):
        return "must be true or false"
    if kind == "string_type":
        return "must be a string"
    if kind == "string_too_short":
        n = int(node.get("minLength", 1))
        return "must not be empty" if n <= 1 else f"must be at least {n:,} characters"
    if kind == "string_too_long":
        return f"must be at most {int(node.get('maxLength', 0)):,} characters"
    if kind in ("literal_error", "enum"):
        choices = [str(v) for v in node.get("enum", []) if v is not None]
        return "must be one of: " + ", ".join(choices) if choices else "is not one of the allowed values"
    if kind in ("list_type", "tuple_type", "set_type"):
        return "must be a list"
    if kind in _OBJECT_ERRORS:
        return "must be an object"
    if kind == "too_long":
        return f"must have at most {int(node.get('maxItems', 0)):,} items"
    if kind == "too_short":
        return f"must have at least {int(node.get('minItems', 1)):,} items"
    return "is not valid"


def _known(op: Operation, surface: Surface) -> str:
    names = [
        (info.alias or name) if surface == "http" else name for name, info in op.params.model_fields.items()
    ]
    return ", ".join(names) if names else "none"


def validation_error(op: Operation, exc: ValidationError, surface: Surface, raw: Any) -> VaultAgentError:
    """The one error of a failed params validation: its first problem, worded for the surface."""
    first = exc.errors()[0]
    path: Path = tuple(p for p in first.get("loc", ()) if isinstance(p, str | int))
    kind = str(first.get("type", ""))
    if kind == "extra_forbidden":
        given = mcp_name(path) if path else "?"
        return InvalidParameter(f"unknown parameter '{given}'; the parameters are: {_known(op, surface)}")
    if not path:
        return InvalidParameter("the parameters must be an object")
    long, _ = label(op, path, surface, raw)
    error: type[VaultAgentError] = InvalidParameter
    if path == ("limit",) and op.limit_error is InvalidLimit:
        error = InvalidLimit
    return error(f"{long} {problem(kind, _node(_schema(op.params), path))}")


# ----------------------------------------------------------------------------- core messages
@cache
def _param_paths(params: type[BaseModel]) -> tuple[Path, ...]:
    """Every parameter path of a params model (objects and their fields, list items' fields)."""
    out: list[Path] = []

    def walk(node: dict[str, Any], prefix: Path) -> None:
        for name, sub in node.get("properties", {}).items():
            here = (*prefix, name)
            out.append(here)
            if isinstance(sub, dict):
                walk(sub, here)
                if isinstance(sub.get("items"), dict):
                    walk(sub["items"], here)

    walk(_schema(params), ())
    return tuple(
        sorted(out, key=lambda p: -len(mcp_name(p)))
    )  # longest first: 'range.start_line' before 'range'


def reword(op: Operation, exc: VaultAgentError, surface: Surface, raw: Any = None) -> VaultAgentError:
    """A core error with the parameter names of its message spelled for the surface.

    Core messages quote MCP names (`parameter 'range.end_line'`, `'full'`); on MCP they stay,
    except the names a shared core function gives its own parameters (`Operation.core_params`).
    """
    if not isinstance(exc, PARAMETER_ERRORS):
        return exc
    message = exc.message
    for core, own in op.core_params:
        message = message.replace(f"'{core}'", f"'{own}'")
    for path in _param_paths(op.params) if surface != "mcp" else ():
        name = mcp_name(path)
        if f"'{name}'" not in message:
            continue
        long, short = label(op, path, surface, raw)
        message = message.replace(f"parameter '{name}'", long)
        message = message.replace(f"'{name}'", short)
    if message == exc.message:
        return exc
    return type(exc)(message)
