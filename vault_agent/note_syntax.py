"""Obsidian note syntax read the same way by the indexer and the write tools.

The indexer (`indexer/markdown.py`, `indexer/frontmatter.py`) and the tag rename
(`files/rename_tag.py` through `tag_syntax.py`) must agree on what is frontmatter, what is
a `%% … %%` comment and what comrak can parse without overflowing its stack, or a rename
would edit text the index never counted as a tag (and miss text it did). These pure rules
live here, in the kernel, so both sides import the one copy.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from vault_agent.text import nfc

# Fenced code opener/closer as seen by the comment scan (also inside lists/blockquotes).
_FENCE_RE = re.compile(r"^ {0,3}(?:(?:>|[-*+]|\d{1,9}[.)]) {0,4})*(`{3,}|~{3,})(.*)$")
_BACKTICKS_RE = re.compile(r"`+")

# A line opening 100 or more blockquotes (list markers may sit between them): such a note
# goes to markdown-it's block parser instead (see `indexer.markdown`). comrak caps list
# nesting itself; blockquotes it nests without limit.
DEEP_QUOTES = 100
_LIST_MARK = r"(?:[-+*]|\d{1,9}[.)])(?=[ \t])[ \t]*"
_DEEP_QUOTES_RE = re.compile(rf"^[ \t]*(?:{_LIST_MARK})*(?:>[ \t]*(?:{_LIST_MARK})*){{{DEEP_QUOTES}}}", re.M)
# comrak-ext builds its Python tree recursively: inline nodes nested ~25,000 deep overflowed
# an 8 MB stack. Each inline level opens with `*`, `_` or `[`: past this many, markdown-it.
DEEP_INLINE = 5_000


# Inline `#tags` (the indexer's rule, docs/parsing.md "Inline tags"; task descriptions too):
# characters that end a tag are whitespace, ASCII punctuation but `_ - /`, general and CJK
# punctuation, full-width ASCII punctuation.
_TAG_END = r"\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~\u2000-\u206f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
# A literal `#` first lets the regex engine jump from `#` to `#` (a lookbehind first would
# make it try every position of the body); the character before is checked in Python.
HASH_TAG_RE = re.compile(rf"#([^{_TAG_END}]+)")
_DIGITS_RE = re.compile(r"[0-9/]+")
_WIKI_RE = re.compile(r"\[\[[^\[\]\n]*\]\]")


def after_space(text: str, pos: int) -> bool:
    """True when `pos` starts the text or follows whitespace (where a `#` can open a tag)."""
    return pos == 0 or text[pos - 1].isspace()


def blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """Replace each span by spaces (so match offsets still order links on the line)."""
    parts: list[str] = []
    pos = 0
    for a, b in spans:
        parts += [text[pos:a], " " * (b - a)]
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def line_tags(line: str) -> list[str]:
    """The inline tags of one line outside code (without `#`, NFC, case kept, in order,
    repeats included): not in code spans or wikilinks, at least one non-digit character."""
    if "`" in line:
        line = blank_spans(line, code_spans(line))
    if "[[" in line:
        line = blank_spans(line, [m.span() for m in _WIKI_RE.finditer(line)])
    out: list[str] = []
    for m in HASH_TAG_RE.finditer(line):
        if after_space(line, m.start()):
            tag = m.group(1).rstrip("/")
            if tag and not _DIGITS_RE.fullmatch(tag):
                out.append(nfc(tag))
    return out


def find_frontmatter_close(lines: list[str]) -> int | None:
    """Index (0-based) of the closing fence when lines[0] opens a frontmatter block, else None.

    The block is recognized by its fences only (SPEC.md "Precise rules"): line 1 is `---`
    (trailing blanks allowed) and a later line is `---` or `...`.
    """
    if not lines or lines[0].rstrip(" \t") != "---":
        return None
    for i in range(1, len(lines)):
        line = lines[i]
        # Fast reject: a fence line is 3 characters plus optional trailing blanks.
        if len(line) >= 3 and line[0] in "-." and line.rstrip(" \t") in ("---", "..."):
            return i
    return None


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


def comment_kept(lines: list[str]) -> list[list[tuple[int, int]]]:
    """Per line, the (start, end) columns that stay once Obsidian `%% … %%` comments outside
    fenced code are removed (a line entirely inside a comment keeps nothing).

    An unclosed `%%` comments out the rest of the note (Obsidian renders it that way).
    """
    out: list[list[tuple[int, int]]] = []
    fence: str | None = None  # the opening fence run while inside fenced code
    in_comment = False
    for line in lines:
        whole = [(0, len(line))]
        if fence is not None:
            match = _FENCE_RE.match(line)
            closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and match is not None and not match.group(2).strip():
                fence = None
            out.append(whole)
            continue
        if not in_comment:
            match = _FENCE_RE.match(line)
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
                out.append(whole)
                continue
        spans = code_spans(line) if "`" in line else []
        kept: list[tuple[int, int]] = []
        pos = 0
        search = 0
        while True:
            idx = line.find("%%", search)
            if idx < 0:
                if not in_comment:
                    kept.append((pos, len(line)))
                break
            if not in_comment and any(a <= idx < b for a, b in spans):
                search = idx + 2  # `%%` inside a code span is literal text
                continue
            if not in_comment:
                kept.append((pos, idx))
            in_comment = not in_comment
            pos = search = idx + 2
        out.append(kept)
    return out


def blank_comments(text: str) -> str:
    """Remove Obsidian `%% … %%` comments outside fenced code, keeping every newline."""
    if "%%" not in text:
        return text
    lines = text.split("\n")
    kept = comment_kept(lines)
    return "\n".join("".join(line[a:b] for a, b in pieces) for line, pieces in zip(lines, kept, strict=True))


def too_deep_for_comrak(src: str) -> bool:
    """Whether comrak could overflow the stack on `src` (counts first: the regex ~25 µs)."""
    if src.count(">") >= DEEP_QUOTES and _DEEP_QUOTES_RE.search(src):
        return True
    return len(src) >= DEEP_INLINE and src.count("*") + src.count("_") + src.count("[") >= DEEP_INLINE


def unlink_tree(nodes: list[Any]) -> None:
    """Empty every `children` list in these comrak subtrees: comrak-ext's AstNode (pyo3, no
    `__traverse__`) links `parent` and `children` in a cycle the GC cannot see, so a linked
    tree is never freed (~20 KB a note); upward links alone are freed by refcounting."""
    while nodes:
        node = nodes.pop()
        children = node.children
        if children:
            node.children = []
            nodes.extend(children)
