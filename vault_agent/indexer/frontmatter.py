"""Frontmatter: find the fenced YAML block, guard it, load it with the one loader.

The block is recognized by its fences only (SPEC.md "Precise rules"): line 1 is `---`
(trailing spaces allowed) and a later line is `---` or `...`. Everything between is the
frontmatter even when it is not valid YAML; it never becomes body text. Before libyaml sees
the text, cheap scans reject what could hurt the process: size (64 KiB), nesting depth (libyaml
recurses in C and segfaults on ~25k levels, RELIABILITY.md §4) and alias count (billion laughs).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from frontmatter.default_handlers import YAMLHandler

# The fence rule is shared with the tag rename (`vault_agent.tag_syntax`), so it lives in the kernel.
from vault_agent.note_syntax import find_frontmatter_close as find_block

MAX_FM_BYTES = 64 * 1024
MAX_FM_DEPTH = 64
MAX_FM_ALIASES = 64

_HANDLER = YAMLHandler()  # python-frontmatter's loader: yaml.load with CSafeLoader (libyaml)
# `*name` where an alias may start: line start, after whitespace or a flow indicator.
_BRACKET_RE = re.compile(r"[\[\]{}]")
_ALIAS_RE = re.compile(r"(?:^|(?<=[\s\[\{,]))\*[^\s\[\]\{\},]")


@dataclass
class Frontmatter:
    """What the parser keeps of a frontmatter block."""

    status: str = "none"  # none | valid | invalid
    error: str | None = None  # too_large | too_deep | too_many_aliases | yaml_error | not_mapping
    fields: dict[str, Any] = field(default_factory=dict)  # stringified top-level keys, file order
    end_line: int = 0  # 1-based file line of the closing fence (0 = no frontmatter)


def nesting_depth(text: str) -> int:
    """Upper bound of YAML nesting: block indentation levels plus open flow brackets.

    Over-counts on brackets inside quoted scalars, which only matters past the cap.
    """
    max_depth = 0
    flow = 0
    indents: list[int] = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        if flow == 0:
            indent = len(line) - len(stripped)
            while indents and indents[-1] >= indent:
                indents.pop()
            indents.append(indent)
            # Compact nested sequences ("- - - x") nest without new indentation.
            extra = 0
            rest = stripped
            while rest.startswith(("- ", "? ")) or rest in ("-", "?"):
                extra += 1
                rest = rest[2:].lstrip(" ")
            block = len(indents) + extra
        else:
            block = len(indents)
        for match in _BRACKET_RE.finditer(line):
            if match.group() in "[{":
                flow += 1
                if block + flow > max_depth:
                    max_depth = block + flow
            elif flow:
                flow -= 1
        if block > max_depth:
            max_depth = block
    return max_depth


def alias_count(text: str) -> int:
    """Number of `*alias` tokens (over-counts `*` at a word start inside scalars)."""
    return len(_ALIAS_RE.findall(text))


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
    if len(text) > MAX_FM_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FM_BYTES:
        return "invalid", "too_large", {}
    if nesting_depth(text) > MAX_FM_DEPTH:
        return "invalid", "too_deep", {}
    if alias_count(text) > MAX_FM_ALIASES:
        return "invalid", "too_many_aliases", {}
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
