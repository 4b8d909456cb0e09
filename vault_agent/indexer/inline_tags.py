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

from vault_agent.note_syntax import HASH_TAG_RE, after_space, line_tags


def inline_tags(body: str, first_line: int, code_ranges: list[tuple[int, int]]) -> list[str]:
    """Tags (without `#`, NFC, case kept, in order, repeats included) of `body`, whose line
    k (0-based) is file line `first_line + k`; `code_ranges` are file-line ranges to skip."""
    hits = [m.start() for m in HASH_TAG_RE.finditer(body) if after_space(body, m.start())]
    if not hits:
        return []  # the common case: one C-level scan of the body, no tag candidate
    ranges = sorted(code_ranges)
    out: list[str] = []
    done_until = -1  # a line is read once, whatever number of candidates it holds
    line_no = first_line
    counted = 0
    for pos in hits:
        if pos < done_until:
            continue
        start = body.rfind("\n", 0, pos) + 1
        end = body.find("\n", pos)
        end = len(body) if end < 0 else end
        done_until = end
        line_no += body.count("\n", counted, start)
        counted = start
        i = bisect.bisect_right(ranges, (line_no, float("inf"))) - 1
        if i >= 0 and ranges[i][0] <= line_no <= ranges[i][1]:
            continue
        out += line_tags(body[start:end])
    return out
