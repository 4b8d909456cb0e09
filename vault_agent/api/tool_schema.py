"""JSON schemas as an MCP client receives them: compact renderings of the pydantic models.

Every byte of `tools/list` is paid in each agent session, so the published schemas are the
models' own JSON schemas with the noise removed and nothing of meaning lost:
- `$defs`/`$ref` of nested models are inlined (each is used once);
- pydantic's generated `title`s and `default: null` go (annotations, not constraints), and
  `additionalProperties: false` (the server refuses unknown parameters with INVALID_PARAMETER);
- `anyOf [X, {"type": "null"}]` becomes `X` with `"type": [t, "null"]`.
Names, types, bounds, enums and `required` stay exactly as the model declares them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


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
    """`X | None` as one schema with a type list, when X has a single plain type."""
    if len(alternatives) != 2 or {"type": "null"} not in alternatives:
        return None
    other = next(a for a in alternatives if a != {"type": "null"})
    if not isinstance(other, dict) or not isinstance(other.get("type"), str):
        return None
    if "const" in other:
        return None
    merged = {**other, "type": [other["type"], "null"]}
    if isinstance(other.get("enum"), list):
        merged["enum"] = [*other["enum"], None]
    return merged


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
    """A model's JSON schema without `$defs`, generated titles, null defaults or nullable anyOfs."""
    tidy: dict[str, Any] = _tidy(_inline(schema, schema.get("$defs", {})))
    tidy.setdefault("type", "object")
    tidy.setdefault("properties", {})
    return tidy


def input_schema(params: type[BaseModel]) -> dict[str, Any]:
    """The snake_case input schema of a params model, as published to MCP clients."""
    return compact_schema(params.model_json_schema(by_alias=False))


def without_descriptions(node: Any, *, in_properties: bool = False) -> Any:
    """The schema's structure only (names, types, bounds, required): what the seeds fix."""
    if isinstance(node, list):
        return [without_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: without_descriptions(value, in_properties=key == "properties")
        for key, value in node.items()
        if in_properties or key != "description"
    }


def output_schema(result: type[BaseModel], *, envelope: bool) -> dict[str, Any] | None:
    """The published output schema: the top-level fields every answer carries, or None.

    The versioned raw contracts publish the names of their own always-present fields,
    derived from the result model as it serializes. Envelope operations publish none: their
    `{data, warnings}` shape is said once in the server's `instructions`, and repeating it
    cost 64 characters per tool of every `tools/list` (about 1,300 of the default list,
    which had to fit 23 tools in 12,000). Field types and descriptions stay out for the same
    reason; docs/mcp.md lists the full result models. Structured content always validates.
    """
    if envelope:
        return None
    required = result.model_json_schema(by_alias=True, mode="serialization").get("required", [])
    return {"type": "object", "required": list(required)}
