"""Obsidian tags in a note's text, with their exact positions, so a rename edits only them.

Two places hold tags (the rules Obsidian and its Tag Wrangler plugin follow):

- **frontmatter**: the values of a top-level key `tags` or `tag` (any letter case), a YAML
  list or a string of names separated by commas or blanks, a leading `#` optional. Found
  with PyYAML's composer (node positions, nothing re-dumped), so a rename edits the value's
  characters in place and the YAML keeps its formatting, comments and quotes. Only plain
  and quoted scalars are edited (a double-quoted value with escapes is left alone).
- **body**: `#name` where `name` is a run of tag characters holding at least one
  non-digit, and the `#` starts a word: at the start of a line, cell or formatting span
  (`**#tag**`) or after a blank. The body is parsed by comrak (the parser the indexer uses
  for the block structure) after the indexer's own preparation: frontmatter lines
  blanked, `%% … %%` comments removed (`note_syntax`). Only comrak's text nodes can hold
  a tag, and not inside a link, an image or a wikilink: never in fenced or indented code,
  inline code, HTML (comments included), math, URLs (autolinks or destinations) or link
  anchors (`[[Note#heading]]`).

Tag characters (Obsidian's rule): anything but blanks, the General and Supplemental
Punctuation blocks (U+2000–206F, U+2E00–2E7F) and ``'!"#$%&()*+,.:;<=>?@^`{|}~[]\\``;
`/` nests (`a/b` is a child of `a`). Tags compare case-insensitively (NFC, lower case).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

import comrak
import yaml

from vault_agent.contracts import MAX_TAG_CHARS
from vault_agent.note_syntax import comment_kept, find_frontmatter_close, too_deep_for_comrak, unlink_tree

_EXCLUDED = "\\s\\ufeff\\u2000-\\u206f\\u2e00-\\u2e7f'!\"#$%&()*+,.:;<=>?@^`{|}~\\[\\]\\\\"
_TAG_RUN_RE = re.compile(f"[^{_EXCLUDED}]+")
_NAME_RE = re.compile(f"[^{_EXCLUDED}\\x00-\\x1f\\x7f]+")  # a new name: no control characters either
_LINE_END_RE = re.compile(r"\r\n|\r|\n")
_FM_SEPARATOR_RE = re.compile(r"[^,\s]+")  # a frontmatter string splits on commas and blanks
_TAGS_KEY_RE = re.compile(r"tags?", re.IGNORECASE)

# The indexer's frontmatter cap (indexer/frontmatter.py MAX_FM_BYTES): a larger block is
# "frontmatter invalid" there, so it holds no tags for the index either.
MAX_FRONTMATTER_BYTES = 64 * 1024

# Inline extensions only: the block structure stays the indexer's (GFM tables on).
_EXT = comrak.ExtensionOptions(
    table=True,
    strikethrough=True,
    highlight=True,
    math_dollars=True,
    autolink=True,
    wikilinks_title_after_pipe=True,
)
_OPTS = comrak.ParseOptions(sourcepos_chars=True)
# A tag inside these is never one: link text, image alt text, wikilink targets and titles.
_OPAQUE = frozenset({comrak.Link, comrak.Image, comrak.WikiLink})
# Inline spans a tag may open: `**#tag**` is a tag when the span itself starts a word.
_FORMATTING = frozenset(
    {
        comrak.Emph,
        comrak.Strong,
        comrak.Strikethrough,
        comrak.Highlight,
        comrak.Underline,
        comrak.SpoileredText,
    }
)
_BREAKS = frozenset({comrak.SoftBreak, comrak.LineBreak})

Where = Literal["frontmatter", "body"]


def tag_key(name: str) -> str:
    """How tags compare: NFC, lower case (Obsidian matches tags case-insensitively)."""
    return unicodedata.normalize("NFC", name).lower()


def clean_tag(raw: str) -> str:
    """A tag parameter without surrounding blanks and its optional leading `#`."""
    name = raw.strip()
    return name[1:] if name.startswith("#") else name


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a tag (None: it can). Obsidian's characters, plus what would
    make a nested tag meaningless (an empty level: `a//b`, `/a`, `a/`)."""
    if not name:
        return "is empty"
    if len(name) > MAX_TAG_CHARS:
        return f"is longer than {MAX_TAG_CHARS} characters"
    if not _NAME_RE.fullmatch(name):
        return "may hold letters, digits, '_', '-', '/' and other symbols, but no blanks or punctuation such as . , : ; ! ? # ' \""
    if not _is_tag(name):
        return "needs at least one character that is not a digit"
    if "" in name.split("/"):
        return "has an empty level (a leading, trailing or doubled '/')"
    return None


def _is_tag(name: str) -> bool:
    """Obsidian's rule: at least one character that is not a digit (`#1984` is no tag)."""
    return bool(name) and not name.replace("/", "").isdigit()


def prefix_length(name: str, old_key: str, old_levels: int) -> int | None:
    """Length of the part of `name` that is the tag `old` (itself or a parent of `name`),
    or None. `old_key` is `tag_key(old)`, `old_levels` its number of `/`-levels."""
    parts = name.split("/", old_levels)
    if len(parts) < old_levels:
        return None
    prefix = "/".join(parts[:old_levels])
    return len(prefix) if tag_key(prefix) == old_key else None


@dataclass(frozen=True)
class TagSpan:
    """One tag name in a note's text: `text[start:end]` (without `#`)."""

    start: int
    end: int
    name: str
    where: Where


@dataclass
class TagScan:
    spans: list[TagSpan]
    body_read: bool  # False: the body is nested too deeply for comrak; its tags were not read


# ----------------------------------------------------------------------------- layout
@dataclass
class _Layout:
    """The body as the indexer parses it (`projected`), and where its characters came from:
    `pieces` are (projected offset, original offset, length), sorted, each a run copied
    unchanged from the original text."""

    projected: str
    pieces: list[tuple[int, int, int]]
    frontmatter: tuple[int, int] | None  # original (start, end) of the text between the fences

    def original(self, start: int, end: int) -> tuple[int, int] | None:
        """Original offsets of projected [start, end) when one piece holds it all."""
        k = bisect.bisect_right(self.pieces, (start, float("inf"), 0)) - 1
        if k < 0:
            return None
        p, o, n = self.pieces[k]
        if end > p + n:
            return None  # the span crosses a removed comment or a line end
        return o + start - p, o + end - p


def _layout(text: str) -> _Layout:
    base = 1 if text.startswith("\ufeff") else 0
    starts = [base]
    ends: list[int] = []
    for m in _LINE_END_RE.finditer(text, base):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    if starts[-1] == len(text) and len(starts) > 1:  # a final line end closes the last line
        starts.pop()
        ends.pop()
    lines = [text[a:b] for a, b in zip(starts, ends, strict=True)]
    close = find_frontmatter_close(lines)
    first = 0 if close is None else close + 1  # first body line (0-based)
    frontmatter = None if close is None else (starts[1], starts[close])
    kept = comment_kept(lines[first:]) if "%%" in text else [[(0, len(line))] for line in lines[first:]]
    out: list[str] = [""] * first  # frontmatter lines blanked, as the indexer does
    pieces: list[tuple[int, int, int]] = []
    pos = first  # the blank lines' newlines
    for line_no, ranges in enumerate(kept, start=first):
        parts: list[str] = []
        for a, b in ranges:
            if b > a:
                pieces.append((pos, starts[line_no] + a, b - a))
                parts.append(lines[line_no][a:b])
                pos += b - a
        out.append("".join(parts))
        pos += 1
    projected = "\n".join(out).replace("\0", "\ufffd")  # NUL as CommonMark reads it (same length)
    return _Layout(projected, pieces, frontmatter)


# ----------------------------------------------------------------------------- body
def _text_runs(projected: str) -> list[tuple[int, int, set[int]]]:
    """(start, end, clear starts) of every run of adjacent tag-capable text nodes.

    A text node starts clear (a `#` there starts a word) after a blank or a line break,
    or as the first child of a block (paragraph, heading, cell) or of a formatting span
    that itself starts clear. The tree is unlinked while it is walked.
    """
    line_starts = [0]
    line_starts += [m.end() for m in re.finditer("\n", projected)]

    def offset(pos: comrak.LineColumn) -> int:
        return line_starts[min(pos.line, len(line_starts)) - 1] + pos.column - 1

    root = comrak.parse_document(projected + "\n", _EXT, _OPTS)
    runs: list[tuple[int, int, set[int]]] = []
    # (node, previous sibling, the first child of its parent starts clear, inside a link)
    stack: list[tuple[comrak.AstNode, comrak.AstNode | None, bool, bool]] = [(root, None, True, False)]
    try:
        while stack:
            node, prev, first_clear, opaque = stack.pop()
            children = node.children
            node.children = []
            kind = type(node.node_value)
            start = offset(node.sourcepos.start)
            clear = (
                first_clear
                if prev is None
                else type(prev.node_value) in _BREAKS
                or (0 < start <= len(projected) and projected[start - 1].isspace())
            )
            if kind is comrak.Text and not opaque:
                end = offset(node.sourcepos.end) + 1
                if 0 <= start < end <= len(projected):
                    clear = clear or start == 0 or projected[start - 1].isspace()
                    if runs and runs[-1][1] == start:
                        runs[-1][2].update({start} if clear else set())
                        runs[-1] = (runs[-1][0], end, runs[-1][2])
                    else:
                        runs.append((start, end, {start} if clear else set()))
            inline_parent = kind in _FORMATTING or kind in _OPAQUE or kind is comrak.Text
            child_clear = clear if kind in _FORMATTING else not inline_parent
            for i in range(len(children) - 1, -1, -1):
                stack.append(
                    (children[i], children[i - 1] if i else None, child_clear, opaque or kind in _OPAQUE)
                )
    finally:
        unlink_tree([node for node, _, _, _ in stack])
    runs.sort(key=lambda r: r[0])
    return runs


def _body_spans(layout: _Layout, text: str) -> list[TagSpan]:
    projected = layout.projected
    spans: list[TagSpan] = []
    for start, end, clear in _text_runs(projected):
        at = projected.find("#", start, end)
        while at >= 0:
            if at in clear or (at > start and projected[at - 1].isspace()):
                m = _TAG_RUN_RE.match(projected, at + 1)
                if m is not None and m.end() <= end and _is_tag(m.group()):
                    found = layout.original(m.start(), m.end())
                    if found is not None and text[found[0] : found[1]] == m.group():
                        spans.append(TagSpan(found[0], found[1], m.group(), "body"))
            at = projected.find("#", at + 1, end)
    return spans


# ----------------------------------------------------------------------------- frontmatter
def _scalars(value: yaml.Node) -> list[yaml.ScalarNode]:
    if isinstance(value, yaml.ScalarNode):
        return [value]
    if isinstance(value, yaml.SequenceNode):
        return [item for item in value.value if isinstance(item, yaml.ScalarNode)]
    return []


def _frontmatter_spans(text: str, start: int, end: int) -> list[TagSpan]:
    block = text[start:end]
    if len(block.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        return []
    try:
        # The pure-Python composer: positions of every node, a RecursionError (not libyaml's
        # crash) on absurd nesting, and aliases never expanded.
        root = yaml.compose(block, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    spans: list[TagSpan] = []
    for key, value in root.value:
        if not (isinstance(key, yaml.ScalarNode) and _TAGS_KEY_RE.fullmatch(str(key.value))):
            continue
        for scalar in _scalars(value):
            a, b = scalar.start_mark.index, scalar.end_mark.index
            if scalar.style in ("'", '"'):
                a, b = a + 1, b - 1
                if scalar.style == '"' and "\\" in block[a:b]:
                    continue  # escapes: the characters are not the value's
            elif scalar.style is not None:
                continue  # block scalars (| >): not how tags are written
            for m in _FM_SEPARATOR_RE.finditer(block, a, b):
                token = m.group()
                name = token.lstrip("#")
                if _is_tag(name):
                    offset = start + m.end() - len(name)
                    spans.append(TagSpan(offset, offset + len(name), name, "frontmatter"))
    return spans


def scan_tags(text: str) -> TagScan:
    """Every tag of a note's text with its position (frontmatter first, then the body)."""
    layout = _layout(text)
    spans = _frontmatter_spans(text, *layout.frontmatter) if layout.frontmatter is not None else []
    if too_deep_for_comrak(layout.projected):
        return TagScan(spans, body_read=False)
    if "#" in layout.projected:
        spans += _body_spans(layout, text)
    return TagScan(spans, body_read=True)
