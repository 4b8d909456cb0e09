"""A note's frontmatter as a small properties table on the page, read as written.

The page shows what the note says, not what a YAML loader makes of it: each top-level
`key: value` line is a row, a flow list (`[a, "b"]`) or a block list (`- a` lines) its
items, and a nested map or a block scalar its indented lines as text. No YAML is loaded at
page time (a hostile block costs the indexer's guarded loader, never a view), so an
invalid block still shows, as the owner wrote it. Bounded: MAX_ROWS rows, MAX_ITEMS items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vault_agent.note_syntax import find_frontmatter_close

MAX_ROWS = 100
MAX_ITEMS = 50
_KEY = re.compile(r"^([^\s#\-][^:]*?|\"[^\"]*\"|'[^']*'):(?:\s+(.*))?$")


@dataclass
class Property:
    key: str
    values: list[str] = field(default_factory=list)
    is_list: bool = False


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(the frontmatter block's inner text or None, the body after it, lines the block took)."""
    lines = text.split("\n")
    close = find_frontmatter_close(lines)
    if close is None:
        return None, text, 0
    return "\n".join(lines[1:close]), "\n".join(lines[close + 1 :]), close + 1


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _flow_items(value: str) -> list[str]:
    """`[a, "b, c", d]` → ["a", "b, c", "d"] (commas inside quotes stay)."""
    items, current, quote = [], "", ""
    for ch in value.strip()[1:-1]:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == ",":
            items.append(current)
            current = ""
            continue
        current += ch
    items.append(current)
    return [_unquote(i) for i in items if i.strip()][:MAX_ITEMS]


def properties(block: str) -> list[Property]:
    """The rows of a frontmatter block (its text between the fences), in file order."""
    rows: list[Property] = []
    for line in block.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line) if not line[0].isspace() else None
        if match:
            if len(rows) >= MAX_ROWS:
                break
            value = (match.group(2) or "").strip()
            row = Property(_unquote(match.group(1)))
            if value.startswith("[") and value.endswith("]"):
                row.values, row.is_list = _flow_items(value), True
            elif value and value not in ("|", ">", "|-", ">-", "|+", ">+"):
                row.values = [_unquote(value)]
            rows.append(row)
        elif rows:  # an indented line: a list item, or the value's text
            item = line.strip()
            row = rows[-1]
            if item.startswith("- ") or item == "-":
                row.is_list = True
                if len(row.values) < MAX_ITEMS:
                    row.values.append(_unquote(item[1:]))
            elif len(row.values) < MAX_ITEMS:
                row.values.append(item)
    return rows
