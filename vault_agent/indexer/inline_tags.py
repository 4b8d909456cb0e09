"""Inline `#tags` of a note body, by Obsidian's tag rules (docs/parsing.md "Inline tags").

A tag is a `#` at the start of a line or after whitespace, followed by one or more tag
characters: letters, digits, `_`, `-`, `/` and other non-punctuation symbols (emoji);
whitespace or punctuation ends it. It must hold a character that is not a digit
(`#1984` is no tag, `#y1984` is). Never inside fenced or indented code blocks (the block
parser's line ranges), code spans or wikilinks (`[[Note#Heading]]`); a `#` inside a URL
or a Markdown link's `(#anchor)` is never after whitespace, so it is not one either.
`%% comments %%` are blanked before this runs; frontmatter is not body.
"""

from __future__ import annotations

import bisect
import re

from vault_agent.indexer.markdown import code_spans
from vault_agent.text import nfc

# Characters that end a tag: whitespace, ASCII punctuation but `_ - /`, general and CJK
# punctuation, full-width ASCII punctuation.
_END = r"\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~\u2000-\u206f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_TAG_RE = re.compile(rf"(?:^|(?<=\s))#([^{_END}]+)", re.M)
_DIGITS_RE = re.compile(r"[0-9/]+")
_WIKI_RE = re.compile(r"\[\[[^\[\]\n]*\]\]")


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    parts: list[str] = []
    pos = 0
    for a, b in spans:
        parts += [text[pos:a], " " * (b - a)]
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def _tags_of_line(line: str) -> list[str]:
    if "`" in line:
        line = _blank(line, code_spans(line))
    if "[[" in line:
        line = _blank(line, [m.span() for m in _WIKI_RE.finditer(line)])
    return [m.group(1) for m in _TAG_RE.finditer(line)]


def inline_tags(body: str, first_line: int, code_ranges: list[tuple[int, int]]) -> list[str]:
    """Tags (without `#`, NFC, case kept, in order, repeats included) of `body`, whose line
    k (0-based) is file line `first_line + k`; `code_ranges` are file-line ranges to skip."""
    if "#" not in body or _TAG_RE.search(body) is None:
        return []  # the common case: one C-level scan of the body
    starts = [0]
    pos = body.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = body.find("\n", pos + 1)
    ranges = sorted(code_ranges)
    seen_lines: set[int] = set()
    out: list[str] = []
    for m in _TAG_RE.finditer(body):
        k = bisect.bisect_right(starts, m.start()) - 1
        if k in seen_lines:
            continue
        seen_lines.add(k)
        line_no = first_line + k
        i = bisect.bisect_right(ranges, (line_no, float("inf"))) - 1
        if i >= 0 and ranges[i][0] <= line_no <= ranges[i][1]:
            continue
        end = starts[k + 1] - 1 if k + 1 < len(starts) else len(body)
        for tag in _tags_of_line(body[starts[k] : end]):
            tag = tag.rstrip("/")
            if tag and not _DIGITS_RE.fullmatch(tag):
                out.append(nfc(tag))
    return out
