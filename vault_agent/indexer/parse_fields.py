"""Values derived from frontmatter fields: title, tags, type/status values, metadata facets.

Nested structures are read one level deep at most, so alias-shared YAML nodes are never
expanded (RELIABILITY.md §4, billion laughs).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from typing import Any

from vault_agent.indexer.frontmatter import scalar_str
from vault_agent.text import nfc, slugify

MAX_FACET_VALUES = 100
MAX_FACET_CHARS = 256
_TAG_SPLIT_RE = re.compile(r"[,\s]+")
_SCALARS = (str, int, float, bool, dt.date, dt.datetime, dt.time)


def title_of(fields: dict[str, Any], fallback: str) -> str:
    """Frontmatter `title` when it is a non-empty string, else the stem-derived fallback."""
    value = fields.get("title")
    if isinstance(value, str) and value.strip():
        return nfc(value.strip())
    return fallback


def _once(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _tag(value: str) -> str:
    value = nfc(value.strip())
    return value[1:].strip() if value.startswith("#") else value


def tag_list(value: Any) -> list[str]:
    """Tags of frontmatter `tags`: list or comma/whitespace string, `#` dropped, once each."""
    raw: list[str] = []
    if isinstance(value, str):
        raw = _TAG_SPLIT_RE.split(value)
    elif isinstance(value, list):
        raw = [item if isinstance(item, str) else scalar_str(item) for item in value if _is_scalar(item)]
    elif value is not None and _is_scalar(value):
        raw = [scalar_str(value)]
    return _once([t for t in (_tag(v) for v in raw) if t])


def _is_scalar(value: Any) -> bool:
    return isinstance(value, _SCALARS)


def facet_values(value: Any) -> list[str]:
    """Seed 000 normalization: arrays expanded, case kept, numbers/booleans as strings,
    null and empty strings dropped, dicts (and nested lists) skipped, each value once."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if item is None or not _is_scalar(item):
            continue
        text = nfc(item) if isinstance(item, str) else scalar_str(item)
        if text.strip():
            out.append(text)
    return _once(out)


def _cap(value: str, state: list[bool]) -> str:
    if len(value) > MAX_FACET_CHARS:
        state[0] = True
        return value[:MAX_FACET_CHARS]
    return value


def _cap_list(values: list[str], state: list[bool]) -> list[str]:
    if len(values) > MAX_FACET_VALUES:
        state[0] = True
        values = values[:MAX_FACET_VALUES]
    return [_cap(v, state) for v in values]


def _scalar_or_null(value: Any, state: list[bool]) -> str | None:
    if value is None or not _is_scalar(value):
        return None
    text = value if isinstance(value, str) else scalar_str(value)
    return _cap(text, state) if text.strip() else None


def _project(value: Any) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if v is not None and _is_scalar(v) and scalar_str(v).strip()), None)
    if value is None or not _is_scalar(value):
        return None
    text = scalar_str(value)
    norm = unicodedata.normalize("NFKC", text)
    if not any(unicodedata.category(ch).startswith("L") or unicodedata.category(ch) == "Nd" for ch in norm):
        return None  # slugify would answer its placeholder 'heading'
    return slugify(text)


def facets_json(fields: dict[str, Any], tags: list[str] | None = None) -> str:
    """seed 004 MetadataFacets `facets` (capped) plus its `truncated` flag, as JSON."""
    state = [False]
    entity = fields.get("entity")
    entity_list = [entity] if isinstance(entity, str) else entity if isinstance(entity, list) else []
    facets = {
        "project": _project(fields.get("project")),
        "tags": _cap_list(list(tags or []), state),
        "date": _scalar_or_null(fields.get("date"), state),
        "updated": _scalar_or_null(fields.get("updated"), state),
        "causal_chain_id": _scalar_or_null(fields.get("causal_chain_id"), state),
        "entity": _cap_list(facet_values(entity_list), state),
        "episode_id": _scalar_or_null(fields.get("episode_id"), state),
    }
    return json.dumps({"facets": facets, "truncated": state[0]}, ensure_ascii=False, sort_keys=True)
