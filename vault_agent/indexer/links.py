"""Outgoing links of a note: wikilinks, embeds and Markdown links to vault files.

Lines inside fenced/indented code blocks (from the block parser's line maps) and code spans
are skipped. URL targets (any `scheme:` or `//host`) are not vault links.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from vault_agent.note_syntax import blank_spans, code_spans

_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")
_MD_RE = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"  # ![text] with one level of nested brackets
    r"\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"  # (<dest> or dest with balanced parens
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"  # optional "title")
)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _split_anchor(raw: str) -> tuple[str, str | None]:
    target, sep, anchor = raw.partition("#")
    return target.strip(), (anchor.strip() if sep else None)


def _wikilink(inner: str) -> tuple[str, str | None]:
    target = inner.split("|", 1)[0]
    if target.endswith("\\") and len(target) < len(inner):
        target = target[:-1]  # `[[t\|alias]]`: Obsidian escapes the pipe inside a table
    return _split_anchor(target)


def _markdown_target(raw: str) -> tuple[str, str | None] | None:
    dest = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    dest = dest.strip()
    if not dest or _SCHEME_RE.match(dest) or dest.startswith("//"):
        return None
    target, anchor = _split_anchor(dest)
    target = unquote(target.split("?", 1)[0])
    return target.strip(), (unquote(anchor) if anchor is not None else None)


def _in_ranges(line: int, ranges: list[tuple[int, int]], start: int) -> tuple[bool, int]:
    """Whether `line` lies in the sorted ranges; returns the index to resume from."""
    while start < len(ranges) and ranges[start][1] < line:
        start += 1
    return (start < len(ranges) and ranges[start][0] <= line), start


def extract_links(
    rel: str, lines: list[str], first_line: int, code_ranges: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """LINKS rows for body `lines` (lines[k] is file line first_line + k)."""
    rows: list[dict[str, Any]] = []
    ranges = sorted(code_ranges)
    cursor = 0
    for k, text in enumerate(lines):
        if "[" not in text:
            continue
        line = first_line + k
        inside, cursor = _in_ranges(line, ranges, cursor)
        if inside:
            continue
        if "`" in text:
            text = blank_spans(text, code_spans(text))
        found: list[tuple[int, str, str | None, str]] = []
        if "[[" in text:
            wiki_spans: list[tuple[int, int]] = []
            for m in _WIKI_RE.finditer(text):
                wiki_spans.append(m.span())
                target, anchor = _wikilink(m.group(2))
                if target or anchor:
                    found.append((m.start(), target, anchor, "embed" if m.group(1) else "wikilink"))
            # Blank the wikilinks before the Markdown scan; only needed when one may follow.
            if wiki_spans and "](" in text:
                text = blank_spans(text, wiki_spans)
        if "](" in text:
            for m in _MD_RE.finditer(text):
                parsed = _markdown_target(m.group(3))
                if parsed is not None:
                    found.append((m.start(), parsed[0], parsed[1], "embed" if m.group(1) else "markdown"))
        found.sort(key=lambda item: item[0])
        for _, target, anchor, kind in found:
            rows.append(
                {
                    "path": rel,
                    "ordinal": len(rows) + 1,
                    "target": target,
                    "anchor": anchor,
                    "kind": kind,
                    "line": line,
                }
            )
    return rows
