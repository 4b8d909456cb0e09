"""Line syntax the parser must see through before the block parse: code spans (backtick
runs, CommonMark's line-local rule) and Obsidian `%% … %%` comments outside fenced code.
Links and inline tags skip code spans too (links.py, inline_tags.py).
"""

from __future__ import annotations

import bisect
import re

# Fenced code opener/closer as seen by the comment scan (also inside lists/blockquotes).
_FENCE_RE = re.compile(r"^ {0,3}(?:(?:>|[-*+]|\d{1,9}[.)]) {0,4})*(`{3,}|~{3,})(.*)$")
_BACKTICKS_RE = re.compile(r"`+")


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
