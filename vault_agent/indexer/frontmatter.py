"""Frontmatter: find the fenced YAML block, guard it, load it with the one loader.

The block is recognized by its fences only (SPEC.md "Precise rules"): line 1 is `---`
(trailing spaces allowed) and a later line is `---` or `...`. Everything between is the
frontmatter even when it is not valid YAML; it never becomes body text. Before libyaml sees
the text, cheap scans reject what could hurt the process: size (64 KiB), nesting depth (libyaml
recurses in C and segfaults on ~25k levels, RELIABILITY.md §4) and alias count (billion laughs),
the guards of `vault_agent/yaml_guard.py` shared with Bases files.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from frontmatter.default_handlers import YAMLHandler

# The fence rule is shared with the tag rename (`vault_agent.tag_syntax`), so it lives in the kernel.
from vault_agent.note_syntax import find_frontmatter_close as find_block
from vault_agent.yaml_guard import guard

MAX_FM_BYTES = 64 * 1024
MAX_FM_DEPTH = 64
MAX_FM_ALIASES = 64

_HANDLER = YAMLHandler()  # python-frontmatter's loader: yaml.load with CSafeLoader (libyaml)


@dataclass
class Frontmatter:
    """What the parser keeps of a frontmatter block."""

    status: str = "none"  # none | valid | invalid
    error: str | None = None  # too_large | too_deep | too_many_aliases | yaml_error | not_mapping
    fields: dict[str, Any] = field(default_factory=dict)  # stringified top-level keys, file order
    end_line: int = 0  # 1-based file line of the closing fence (0 = no frontmatter)


def scalar_str(value: Any) -> str:
    """One string form for scalars: booleans lower-case, null 'null', dates ISO."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    return str(value)


def load_block(text: str) -> tuple[str, str | None, dict[str, Any]]:
    """Guard and load the text between the fences: (status, error rule, fields)."""
    rule = guard(text, MAX_FM_BYTES, MAX_FM_DEPTH, MAX_FM_ALIASES)
    if rule is not None:
        return "invalid", rule, {}
    try:
        data = _HANDLER.load(text)
    except Exception:  # YAMLError, ValueError (2024-02-30), RecursionError, TypeError …
        return "invalid", "yaml_error", {}
    if data is None:
        return "valid", None, {}
    if not isinstance(data, dict):
        return "invalid", "not_mapping", {}
    fields: dict[str, Any] = {}
    for key, value in data.items():
        # Only top-level keys are stringified; values are never traversed here (aliases
        # are shared references and may expand enormously).
        fields[key if isinstance(key, str) else scalar_str(key)] = value
    return "valid", None, fields


def parse_frontmatter(lines: list[str]) -> Frontmatter:
    """Frontmatter of a note given its LF-split lines (BOM already removed)."""
    close = find_block(lines)
    if close is None:
        return Frontmatter()
    status, error, fields = load_block("\n".join(lines[1:close]))
    return Frontmatter(status=status, error=error, fields=fields, end_line=close + 1)
