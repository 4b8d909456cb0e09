"""Whether a line of a note holds a task as the index reads it.

A task is a checkbox list item outside the frontmatter, `%% … %%` comments and code. The
indexer decides it with its block parse (comrak): a list item's first line. This module
runs the same parse over the note as it is now (frontmatter lines blanked, comments removed,
line positions kept), so `vault_update_task` never ticks a `- [ ]` inside a code block or a
lazy paragraph line. A note nested too deeply for comrak is not parsed: its checkbox lines
are taken as they are (the writer's other checks still apply).
"""

from __future__ import annotations

from typing import Literal

import comrak

from vault_agent.note_syntax import blank_comments, find_frontmatter_close, too_deep_for_comrak, unlink_tree

_EXT = comrak.ExtensionOptions(table=True)  # the indexer's block options (indexer/markdown.py)
_OPTS = comrak.ParseOptions(sourcepos_chars=True)
_CONTAINERS = (comrak.Document, comrak.List, comrak.Item, comrak.BlockQuote)

Place = Literal["item", "frontmatter", "not_item"]


def place_of(lines: list[str], line_no: int) -> Place:
    """Where 1-based `line_no` of a note (its lines without line ends) stands: `item` (a
    list item's first line), `frontmatter`, or `not_item` (code, a comment, a paragraph)."""
    close = find_frontmatter_close(lines)
    first = 0 if close is None else close + 1
    if line_no <= first:
        return "frontmatter"
    body = blank_comments("\n".join(lines[first:])).split("\n")
    src = "\n".join([""] * first + body)
    if too_deep_for_comrak(src):
        return "item"
    return "item" if line_no in _item_lines(src) else "not_item"


def _item_lines(src: str) -> set[int]:
    """First lines of every list item (containers walked; code and paragraphs are leaves)."""
    found: set[int] = set()
    stack = [comrak.parse_document(src + "\n", _EXT, _OPTS)]
    unvisited: list[comrak.AstNode] = []
    try:
        while stack:
            node = stack.pop()
            children = node.children
            node.children = []
            if isinstance(node.node_value, comrak.Item):
                found.add(node.sourcepos.start.line)
            if isinstance(node.node_value, _CONTAINERS):
                stack.extend(children)
            else:
                unvisited.extend(children)
    finally:
        unlink_tree(unvisited + stack)
    return found
