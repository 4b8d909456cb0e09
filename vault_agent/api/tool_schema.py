"""JSON schemas as an MCP client receives them: compact renderings of the pydantic models.

Every byte of `tools/list` is paid in each agent session, so the published schemas are the
models' own JSON schemas with the noise removed and nothing of meaning lost:
- `$defs`/`$ref` of nested models are inlined (each is used once);
- pydantic's generated `title`s and `default: null` go (annotations, not constraints), and
  `additionalProperties: false` (the server refuses unknown parameters with INVALID_PARAMETER);
- `anyOf [X, {"type": "null"}]` becomes `X`: optional means absent (issue 23). The server
  still accepts an explicit null (the model does); the schema does not advertise it, because
  type lists and null branches are what clients render worst (the MCP Inspector's form
  builder dispatches on one `type` string; Gemini's schema subset has no type lists).
Names, types, bounds, enums and `required` stay exactly as the model declares them, except the
path length cap (`_path_cap`).
`portability_warnings` lists what a published schema should never contain; the tool-list
test asserts there is none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from vault_agent.contracts import MAX_PATH_CHARS


def _inline(node: Any, defs: dict[str, Any], stack: tuple[str, ...] = ()) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in stack:  # a recursive model (a heading tree): the inner level is just an object
            return {"type": "object"}
        target = _inline(defs[name], defs, (*stack, name))
        extra = {k: _inline(v, defs, stack) for k, v in node.items() if k != "$ref"}
        return {**target, **extra}
    return {k: _inline(v, defs, stack) for k, v in node.items() if k != "$defs"}


def _nullable(alternatives: list[Any]) -> dict[str, Any] | None:
    """`X | None` as X alone: an optional parameter is one the caller leaves out."""
    if len(alternatives) != 2 or {"type": "null"} not in alternatives:
        return None
    other = next(a for a in alternatives if a != {"type": "null"})
    if not isinstance(other, dict):
        return None
    if isinstance(other.get("enum"), list):
        return {**other, "enum": [v for v in other["enum"] if v is not None]}
    return dict(other)


def _tidy(node: Any, *, in_properties: bool = False) -> Any:
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    if not isinstance(node, dict):
        return node
    if in_properties:  # keys are field names here, not schema keywords
        return {name: _tidy(sub) for name, sub in node.items()}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "additionalProperties" and value is False:
            continue  # the server refuses unknown parameters itself, with the canonical error
        out[key] = _tidy(value, in_properties=key == "properties")
    if isinstance(out.get("anyOf"), list) and (merged := _nullable(out["anyOf"])) is not None:
        rest = {k: v for k, v in out.items() if k != "anyOf"}
        return {**merged, **rest}
    return out


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON schema without `$defs`, generated titles, null defaults or null branches."""
    tidy: dict[str, Any] = _tidy(_inline(schema, schema.get("$defs", {})))
    tidy.setdefault("type", "object")
    tidy.setdefault("properties", {})
    return tidy


def constraint_schema(params: type[BaseModel]) -> dict[str, Any]:
    """Every constraint of a params model (snake_case, compact): what the server enforces."""
    return compact_schema(params.model_json_schema(by_alias=False))


def _without(node: Any, drop: Callable[[str, Any], bool], *, in_properties: bool = False) -> Any:
    """A schema without the keywords `drop(keyword, value)` selects (field names are kept)."""
    if isinstance(node, list):
        return [_without(item, drop) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _without(value, drop, in_properties=key == "properties")
        for key, value in node.items()
        if in_properties or not drop(key, value)
    }


def _path_cap(key: str, value: Any) -> bool:
    """The path length cap: a guard no agent comes near (it cost 16 characters per path
    parameter of every tools/list); the server still refuses a longer path."""
    return key == "maxLength" and value == MAX_PATH_CHARS


def input_schema(params: type[BaseModel]) -> dict[str, Any]:
    """The snake_case input schema of a params model, as published to MCP clients."""
    published: dict[str, Any] = _without(constraint_schema(params), _path_cap)
    return published


def without_descriptions(node: Any) -> Any:
    """The schema's structure only (names, types, bounds, required): what the seeds fix."""
    return _without(node, lambda key, _value: key == "description")


# Keywords no published schema uses: unions and references (clients that build forms, and
# function-calling subsets such as Gemini's, handle them badly or not at all).
_UNPORTABLE_KEYWORDS = (
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "if",
    "then",
    "else",
    "const",
    "nullable",
)
_PLAIN_TYPES = ("string", "integer", "number", "boolean", "array", "object")


def portability_warnings(schema: dict[str, Any], where: str = "") -> list[str]:
    """What a client may not render or accept in a published schema, one line per finding.

    The rules follow the MCP Inspector's form builder (`SchemaForm.renderField`: one `type`
    string per field, string enums for a select, objects with `properties`, arrays with
    `items`) and the strictest function-calling subsets: no type lists, no null, no unions,
    no references, no untyped or free-form fields.
    """
    found: list[str] = []
    here = where or "(root)"
    kind = schema.get("type")
    if isinstance(kind, list):
        found.append(f"{here}: type list {kind}")
    elif kind not in _PLAIN_TYPES:
        found.append(f"{here}: type {kind!r} is not one plain JSON type")
    for keyword in _UNPORTABLE_KEYWORDS:
        if keyword in schema:
            found.append(f"{here}: uses {keyword}")
    enum = schema.get("enum")
    if enum is not None and (kind != "string" or not all(isinstance(v, str) for v in enum)):
        found.append(f"{here}: enum of other values than strings")
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            found.append(f"{here}: object without properties")
        else:
            for name, sub in properties.items():
                found += portability_warnings(sub, f"{where}.{name}" if where else name)
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            found.append(f"{here}: array without items")
        else:
            found += portability_warnings(items, f"{here}[]")
    return found
