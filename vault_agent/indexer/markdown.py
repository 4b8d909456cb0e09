"""Block structure of a note body with markdown-it-py: headings, content blocks, code lines.

Only the block parser runs over the whole note (the core "inline" rule is disabled); heading
contents alone are inline-parsed to get their plain text. Tokens are reduced to small
records and dropped before returning, so nothing of the token stream outlives a note.
"""

from __future__ import annotations

import bisect
import logging
import re
import sys
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

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


_MD = _make_parser()
_silence_rule_debug_logs()  # after MarkdownIt(): every rule module is imported by then

# Fenced code opener/closer as seen by the comment scan (also inside lists/blockquotes).
_FENCE_RE = re.compile(r"^ {0,3}(?:(?:>|[-*+]|\d{1,9}[.)]) {0,4})*(`{3,}|~{3,})(.*)$")
# Characters that can start inline syntax (emphasis, code, links, html, entities, escapes).
_INLINE_SYNTAX_RE = re.compile(r"[\\`*_\[\]<>&!~]")
_BACKTICKS_RE = re.compile(r"`+")
_TEXT_TOKENS = frozenset({"text", "code_inline", "html_inline", "text_special"})
_CONTENT_BLOCKS = frozenset({"paragraph_open", "table_open"})
_CODE_BLOCKS = frozenset({"fence", "code_block"})


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


def code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of the code spans on one line: a backtick run up to the next run of the
    same length (CommonMark's rule, line-local). Linear, unlike a backtracking regex."""
    runs = [m.span() for m in _BACKTICKS_RE.finditer(line)]
    by_len: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(k)
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        a, b = runs[k]
        same = by_len[b - a]
        nxt = bisect.bisect_right(same, k)
        if nxt < len(same):
            close = same[nxt]
            spans.append((a, runs[close][1]))
            k = close + 1
        else:
            k += 1
    return spans


def blank_comments(text: str) -> str:
    """Remove Obsidian `%% … %%` comments outside fenced code, keeping every newline.

    An unclosed `%%` comments out the rest of the note (Obsidian renders it that way).
    """
    if "%%" not in text:
        return text
    out: list[str] = []
    fence: str | None = None  # the opening fence run while inside fenced code
    in_comment = False
    for line in text.split("\n"):
        if fence is not None:
            match = _FENCE_RE.match(line)
            closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and match is not None and not match.group(2).strip():
                fence = None
            out.append(line)
            continue
        if not in_comment:
            match = _FENCE_RE.match(line)
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
                out.append(line)
                continue
        spans = code_spans(line) if "`" in line else []
        kept: list[str] = []
        pos = 0
        search = 0
        while True:
            idx = line.find("%%", search)
            if idx < 0:
                if not in_comment:
                    kept.append(line[pos:])
                break
            if not in_comment and any(a <= idx < b for a, b in spans):
                search = idx + 2  # `%%` inside a code span is literal text
                continue
            if not in_comment:
                kept.append(line[pos:idx])
            in_comment = not in_comment
            pos = search = idx + 2
        out.append("".join(kept))
    return "\n".join(out)


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


def parse_structure(src: str) -> Structure:
    """Headings (with body_available) and code-block line ranges of a body.

    `src` has the file's line layout: frontmatter lines and comments already blanked, so
    token line maps are file lines (0-based) directly.
    """
    env: dict[str, Any] = {}
    # The block parser alone: the core chain's other enabled rules add nothing here (its
    # newline/NUL normalization is a no-op on this LF-joined, NUL-free text; inline is
    # disabled; text_join only touches inline children), so skip their passes over the text.
    tokens: list[Token] = []
    if "\r" in src or "\0" in src:  # not from parse.py: let the full chain normalize it
        tokens = _MD.parse(src, env)
    else:
        _MD.block.parse(src, _MD, env, tokens)
    headings: list[Heading] = []
    heading_at: list[int] = []  # index into `events` of each heading
    events: list[int] = []  # per structural event: heading level, or 0 for a content block
    code_ranges: list[tuple[int, int]] = []
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            inline = tokens[i + 1]
            level = int(tok.tag[1])
            line = (tok.map[0] if tok.map else 0) + 1
            headings.append(Heading(line=line, level=level, text=heading_text(inline.content, env)))
            heading_at.append(len(events))
            events.append(level)
            i += 3
            continue
        if kind in _CONTENT_BLOCKS:
            events.append(0)
        elif kind in _CODE_BLOCKS:
            if tok.map:
                code_ranges.append((tok.map[0] + 1, tok.map[1]))
            if tok.content.strip():
                events.append(0)
        elif kind == "html_block" and tok.content.strip():
            events.append(0)
        i += 1
    del tokens
    # body_available: a content block before the next heading of the same or a higher level.
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
    return Structure(headings=headings, code_ranges=code_ranges)
