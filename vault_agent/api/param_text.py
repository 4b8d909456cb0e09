"""Parameters given as text: JSON text for object/list fields (MCP clients, query strings).

Shared by the HTTP adapter (query strings) and the MCP adapter (clients that send an object
argument as a JSON string); lives apart so neither transport imports the other.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from vault_agent.errors import InvalidParameter


def unwrap(annotation: Any) -> list[Any]:
    """The alternatives of an annotation with Optional/Union/Annotated peeled off."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return unwrap(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [a for arg in get_args(annotation) if arg is not type(None) for a in unwrap(arg)]
    return [annotation]


def container_kind(annotation: Any) -> Literal["list", "object", "scalar"]:
    for alt in unwrap(annotation):
        origin = get_origin(alt) or alt
        if origin in (list, tuple, set, frozenset):
            return "list"
        if origin is dict or (isinstance(origin, type) and issubclass(origin, BaseModel)):
            return "object"
    return "scalar"


def nested_model(annotation: Any) -> type[BaseModel] | None:
    for alt in unwrap(annotation):
        if isinstance(alt, type) and issubclass(alt, BaseModel):
            return alt
    return None


def field_info(model: type[BaseModel] | None, key: str) -> Any:
    if model is None:
        return None
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def json_text(key: str, text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise InvalidParameter(f"parameter '{key}' must be valid JSON") from None


def coerce_json_text(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level object/list fields given as JSON text become the parsed value (MCP clients do this)."""
    out = dict(data)
    for key, value in data.items():
        info = field_info(model, key)
        if info is None or not isinstance(value, str):
            continue
        if container_kind(info.annotation) != "scalar" and value.lstrip()[:1] in ("[", "{"):
            out[key] = json_text(key, value)
    return out
