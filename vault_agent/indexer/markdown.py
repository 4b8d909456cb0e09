"""Block structure of a note body: headings, content blocks, code lines.

comrak (CommonMark/GFM in Rust, through the `comrak-ext` binding) parses the block
structure: which lines are headings (line, level), code blocks and content. cmark, the
CommonMark reference, agrees with it where markdown-it-py did not (docs/parsing.md).
Heading *text* is still markdown-it-py's inline parse of the heading's source, so its
rules (Obsidian's double-tilde strikethrough, references, entities, HTML) are unchanged:
the source of each heading is cut from the note's lines at comrak's source position, as
markdown-it's heading rules cut it, and inline-parsed only when it holds inline syntax.
"""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import comrak
from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.token import Token

# The comment and code-span rules and the comrak depth guard are shared with the tag rename,
# so they live in the kernel; `blank_comments` and `code_spans` are re-exported for the parser.
from vault_agent.note_syntax import too_deep_for_comrak, unlink_tree
from vault_agent.text import collapse_ws, nfc


class _NoDebugLogger(logging.Logger):
    """A logger whose `debug` does nothing (every other level behaves as usual)."""

    def debug(self, *args: Any, **kwargs: Any) -> None:
        return None


def _silence_rule_debug_logs() -> None:
    """markdown-it's block rules call `LOGGER.debug(fmt, state, ...)` on every attempt at
    every line (~365 calls a note, ~5% of the parse CPU even with DEBUG off). The result is
    never used, so output cannot change; and such a record would carry note text, which our
    logs must never hold. Each rule module's logger is swapped for one without `debug`."""
    for mod in list(sys.modules.values()):
        name = getattr(mod, "__name__", "")
        logger = getattr(mod, "LOGGER", None)
        if name.startswith("markdown_it.") and type(logger) is logging.Logger:
            quiet = _NoDebugLogger(logger.name)
            quiet.parent = logger.parent
            mod.LOGGER = quiet  # type: ignore[attr-defined]


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.disable("inline")  # core rule: inline-parse only heading contents, on demand
    return md


# Block structure only: GFM tables change which lines are blocks; strikethrough is inline
# (and comrak's also takes single tildes, which Obsidian does not), so it stays off here.
_COMRAK_EXT = comrak.ExtensionOptions(table=True)
# Columns in characters (not UTF-8 bytes): they index the Python line strings directly.
_COMRAK_OPTS = comrak.ParseOptions(sourcepos_chars=True)


_MD = _make_parser()
_silence_rule_debug_logs()  # after MarkdownIt(): every rule module is imported by then

# Characters that can start inline syntax (emphasis, code, links, html, entities, escapes).
_INLINE_SYNTAX_RE = re.compile(r"[\\`*_\[\]<>&!~]")
_TEXT_TOKENS = frozenset({"text", "code_inline", "html_inline", "text_special"})
# A blockquote marker opening a continuation line of a setext heading: indentation, `>`.
_QUOTE_MARK_RE = re.compile(r"[ \t]*>")
_CONTAINERS = frozenset({comrak.Document, comrak.List, comrak.Item})


@dataclass
class Heading:
    """One heading: 1-based file line, level 1–6, plain text, body below it."""

    line: int
    level: int
    text: str
    body_available: bool = False


@dataclass
class Structure:
    headings: list[Heading]
    code_ranges: list[tuple[int, int]]  # 1-based inclusive file-line ranges of code blocks
    # List items: (file line of the marker, line of the item holding it or 0), document order
    items: list[tuple[int, int]] = field(default_factory=list)


def _inline_text(tokens: list[Token], parts: list[str]) -> None:
    for tok in tokens:
        kind = tok.type
        if kind in _TEXT_TOKENS:
            parts.append(tok.content)
        elif kind in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif kind == "image":
            _inline_text(tok.children or [], parts)  # the alt text, formatting stripped
        elif tok.children:
            _inline_text(tok.children, parts)


def heading_text(content: str, env: dict[str, Any]) -> str:
    """Plain text of a heading's inline content: NFC, whitespace collapsed, trimmed."""
    if not _INLINE_SYNTAX_RE.search(content):
        return collapse_ws(nfc(content))  # nothing for the inline parser to strip
    tokens: list[Token] = []
    _MD.inline.parse(content, _MD, env, tokens)
    parts: list[str] = []
    _inline_text(tokens, parts)
    return collapse_ws(nfc("".join(parts)))


def _atx_source(line: str, column: int) -> str:
    """An ATX heading's inline source, cut as markdown-it's `heading` rule cuts it: after
    the opening `#` run, trailing blanks and a closing `#` run (after a blank) dropped."""
    pos = column - 1  # the first `#`
    end = len(line)
    while pos < end and line[pos] == "#":
        pos += 1
    while end > pos and line[end - 1] in " \t":
        end -= 1
    tail = end
    while tail > pos and line[tail - 1] == "#":
        tail -= 1
    if tail > pos and line[tail - 1] in " \t":
        end = tail
    return mdTrim(line[pos:end])


def _continuation(line: str, quotes: int) -> str:
    """A setext heading's later line without its container prefix: up to `quotes`
    blockquote markers (a lazy line has fewer) and the indentation. markdown-it keeps any
    indentation past the container's, but its inline newline rule skips it, so the heading
    text is the same."""
    pos = 0
    for _ in range(quotes):
        mark = _QUOTE_MARK_RE.match(line, pos)
        if mark is None:
            break
        pos = mark.end()
    return line[pos:].lstrip(" \t")


def _setext_source(lines: list[str], start: comrak.LineColumn, end_line: int, quotes: int) -> str:
    """A setext heading's inline source: its text lines (the underline excluded), joined by
    newlines and trimmed, as markdown-it's `lheading` rule hands them to the inline parser.
    A paragraph opening with reference definitions keeps them in comrak's source range, so
    such a source goes through markdown-it's block rules to drop them."""
    parts = [lines[start.line - 1][start.column - 1 :]]
    parts.extend(_continuation(lines[n - 1], quotes) for n in range(start.line + 1, end_line))
    source = mdTrim("\n".join(parts))
    if source.startswith("[") and "]:" in source:
        tokens: list[Token] = []
        _MD.block.parse(source + "\n===", _MD, {}, tokens)
        heads = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
        source = heads[-1] if heads else source
    return source


def _code_lines(block: comrak.NodeCodeBlock, start: int) -> tuple[int, int]:
    """File lines of a code block, from its literal's line count: comrak's end position of
    a fence left open inside a list item can stop short of the code (a link on such a line
    must not be extracted). A fence's own opening and closing lines are code too."""
    literal = block.literal
    count = literal.count("\n") + (1 if literal and not literal.endswith("\n") else 0)
    if block.fenced:
        return start, start + count + (1 if block.closed else 0)
    return start, max(start, start + count - 1)


@dataclass
class _Blocks:
    """What the walk collects, in document order."""

    lines: list[str]
    sources: list[tuple[int, int, str]]  # per heading: (line, level, inline source)
    heading_at: list[int]  # index into `events` of each heading
    events: list[int]  # per structural event: heading level, or 0 for a content block
    code_ranges: list[tuple[int, int]]
    items: list[tuple[int, int]] = field(default_factory=list)  # Structure.items


def _walk(root: comrak.AstNode, out: _Blocks) -> None:
    """Visit block nodes only, in document order, unlinking the tree (`unlink_tree`) as it goes;
    inline subtrees (never needed here) and whatever a walk that raised did not reach are
    unlinked after it. Iterative: lists nested by indentation can be 1,000 levels deep."""
    # (node, blockquotes around it, line of the list item around it or 0)
    stack: list[tuple[comrak.AstNode, int, int]] = [(root, 0, 0)]
    unvisited: list[comrak.AstNode] = []  # subtrees the walk does not descend into
    try:
        while stack:
            node, quotes, item = stack.pop()
            value = node.node_value
            kind = type(value)
            children = node.children  # taken before the node is read, which may raise
            if kind is comrak.Item:
                line = node.sourcepos.start.line
                out.items.append((line, item))
                item = line
            if children:
                node.children = []
                if kind is comrak.BlockQuote:
                    stack.extend((child, quotes + 1, item) for child in reversed(children))
                elif kind in _CONTAINERS:
                    stack.extend((child, quotes, item) for child in reversed(children))
                else:
                    unvisited.extend(children)
            if type(value) is comrak.Heading:
                pos = node.sourcepos
                level = value.value.level
                if pos.end.line > pos.start.line:  # setext: text lines, then the underline
                    source = _setext_source(out.lines, pos.start, pos.end.line, quotes)
                else:
                    source = _atx_source(out.lines[pos.start.line - 1], pos.start.column)
                out.sources.append((pos.start.line, level, source))
                out.heading_at.append(len(out.events))
                out.events.append(level)
            elif kind is comrak.Paragraph or kind is comrak.Table:
                out.events.append(0)
            elif type(value) is comrak.CodeBlock:
                out.code_ranges.append(_code_lines(value.value, node.sourcepos.start.line))
                if value.value.literal.strip():
                    out.events.append(0)
            elif type(value) is comrak.HtmlBlock and value.value.literal.strip():
                out.events.append(0)
    finally:
        unvisited.extend(node for node, _, _ in stack)
        unlink_tree(unvisited)


def _markdown_it_structure(src: str) -> _Blocks:
    """The same walk over markdown-it-py's block tokens (the block parser before
    PARSER_VERSION 3), for notes nested past `too_deep_for_comrak`: markdown-it stops at 20
    levels, where comrak's recursion would overflow the stack on a line of ~30,000 `>`."""
    env: dict[str, Any] = {}
    tokens: list[Token] = []
    _MD.block.parse(src, _MD, env, tokens)
    out = _Blocks(lines=[], sources=[], heading_at=[], events=[], code_ranges=[])
    open_items: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.type == "list_item_open":
            line = (tok.map[0] if tok.map else 0) + 1
            out.items.append((line, open_items[-1] if open_items else 0))
            open_items.append(line)
        elif tok.type == "list_item_close" and open_items:
            open_items.pop()
        elif tok.type == "heading_open":
            level = int(tok.tag[1])
            out.sources.append(((tok.map[0] if tok.map else 0) + 1, level, tokens[i + 1].content))
            out.heading_at.append(len(out.events))
            out.events.append(level)
        elif tok.type in ("paragraph_open", "table_open"):
            out.events.append(0)
        elif tok.type in ("fence", "code_block", "html_block"):
            if tok.type != "html_block" and tok.map:
                out.code_ranges.append((tok.map[0] + 1, tok.map[1]))
            if tok.content.strip():
                out.events.append(0)
    return out


def _references(src: str) -> dict[str, Any]:
    """markdown-it's environment for inline parses: the document's link reference
    definitions, from its block parse (a heading `[x][ref]` or `[ref]` reads as `x`/`ref`
    only when `ref` is defined). Only needed when a heading has a `[`."""
    env: dict[str, Any] = {}
    if "]:" in src:
        _MD.block.parse(src, _MD, env, [])
    return env


def _body_available(headings: list[Heading], heading_at: list[int], events: list[int]) -> None:
    """A content block before the next heading of the same or a higher level."""
    next_content = len(events)
    following: list[int] = [len(events)] * len(events)  # index of next content event after k
    for k in range(len(events) - 1, -1, -1):
        following[k] = next_content
        if events[k] == 0:
            next_content = k
    stack: list[int] = []  # heading indices whose section is still open
    bounds: list[int] = [len(events)] * len(headings)
    for h, pos in enumerate(heading_at):
        level = headings[h].level
        while stack and headings[stack[-1]].level >= level:
            bounds[stack.pop()] = pos
        stack.append(h)
    for h, pos in enumerate(heading_at):
        headings[h].body_available = following[pos] < bounds[h]


def parse_structure(src: str) -> Structure:
    """Headings (with body_available) and code-block line ranges of a body.

    `src` has the file's line layout: frontmatter lines and comments already blanked, so
    source positions are file lines (1-based) directly.
    """
    if "\r" in src or "\0" in src:  # not from parse.py: normalize as CommonMark reads it
        src = src.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    if too_deep_for_comrak(src):
        out = _markdown_it_structure(src)
    else:
        out = _Blocks(lines=src.split("\n"), sources=[], heading_at=[], events=[], code_ranges=[])
        # A final newline: comrak reads a last line `1.` without one as paragraph text,
        # where CommonMark (cmark) has an empty list item. Line numbers do not change.
        _walk(comrak.parse_document(src + "\n", _COMRAK_EXT, _COMRAK_OPTS), out)
    env: dict[str, Any] | None = None
    headings: list[Heading] = []
    for line, level, source in out.sources:
        if env is None and "[" in source:
            env = _references(src)
        headings.append(Heading(line=line, level=level, text=heading_text(source, env or {})))
    _body_available(headings, out.heading_at, out.events)
    return Structure(headings=headings, code_ranges=out.code_ranges, items=out.items)
