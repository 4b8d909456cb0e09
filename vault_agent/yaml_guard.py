"""The guards every YAML text passes before libyaml sees it: size, nesting depth, aliases.

One loader reads YAML in vault-agent: PyYAML over libyaml (`CSafeLoader`), behind these
cheap scans of the text. libyaml recurses in C and crashes the process on ~25k levels of
nesting (RELIABILITY.md §4), and aliases are shared references that a walk over the loaded
value would expand (the billion laughs), so a text is refused by name before it is parsed:
`guard(text, ...)` returns the rule it breaks (`too_large`, `too_deep`, `too_many_aliases`).
The indexer's frontmatter (`indexer/frontmatter.py`) and the `.base` files of Bases
(`query/bases/base_yaml.py`) both use it, with their own bounds.
"""

from __future__ import annotations

import re

_BRACKET_RE = re.compile(r"[\[\]{}]")
# `*name` where an alias may start: line start, after whitespace or a flow indicator.
_ALIAS_RE = re.compile(r"(?:^|(?<=[\s\[\{,]))\*[^\s\[\]\{\},]")


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


def guard(text: str, max_bytes: int, max_depth: int, max_aliases: int) -> str | None:
    """The rule `text` breaks (`too_large`, `too_deep`, `too_many_aliases`), or None."""
    if len(text) > max_bytes or len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        return "too_large"
    if nesting_depth(text) > max_depth:
        return "too_deep"
    if alias_count(text) > max_aliases:
        return "too_many_aliases"
    return None
