"""Link-safe moves: find the links that resolve to moved files and rewrite their targets.

Targets resolve with the one Obsidian resolver (`vault_agent.linkpaths`, shared with
`related`): exact path, relative path, then path suffix / bare name with Obsidian's choice
among several (the source's own folder, else the shortest path). `[[t\\|alias]]` (the
escaped pipe Obsidian writes inside tables) is the target `t`. Markdown links `[x](t)`,
`![x](t)`: `%xx` decoded; URLs, `#anchor`-only and `mailto:` are not vault links.
Rewriting keeps each link's style: a bare name (or partial path) stays as short as it can
while it still resolves to the moved file from its source (else it becomes the vault path),
a path stays a path, a relative link is recomputed from the (possibly moved) source, `.md`
is kept or omitted as written, anchors, aliases and titles are untouched. Fenced code
blocks and code spans are skipped.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from vault_agent.linkpaths import Form, LinkResolver, folder_of

_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")
_MD_RE = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_CODE_SPAN_RE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _folder(rel: str) -> str:
    return folder_of(rel)


# The one Obsidian resolver (vault_agent/linkpaths.py), shared with `related`.
LinkIndex = LinkResolver


@dataclass
class RewriteContext:
    """One move: old → new paths of every moved file, and the file sets before and after."""

    mapping: dict[str, str]
    before: LinkIndex
    after: LinkIndex


def _strip_md(new: str, old_target: str) -> str:
    if new.lower().endswith(".md") and not old_target.strip().lower().endswith(".md"):
        return new[:-3]
    return new


def _relative(q: str, source_new: str) -> str:
    return posixpath.relpath(q, _folder(source_new) or ".")


def _short_form(old: str, q: str, source_new: str, after: LinkIndex, markdown: bool) -> str:
    """q spelled with as many trailing components as `old` had, when that still resolves
    to q from the source after the move; else the vault path."""
    parts = old.strip().strip("/").count("/") + 1
    short = _strip_md("/".join(q.split("/")[-parts:]), old)
    found = after.resolve(short, source_new, markdown)
    return short if found is not None and found[0] == q else _strip_md(q, old)


def _render_wiki(old: str, form: Form, q: str, source_new: str, after: LinkIndex) -> str:
    if form in ("name", "suffix"):
        return _short_form(old, q, source_new, after, False)
    if form == "relative":
        rel = _relative(q, source_new)
        if old.strip().startswith("./") and not rel.startswith("../"):
            rel = "./" + rel
        return _strip_md(rel, old)
    return _strip_md(q, old)


def _render_markdown(
    raw_path: str, form: Form, q: str, source_new: str, bracketed: bool, after: LinkIndex
) -> str:
    if form in ("name", "suffix"):
        new = _short_form(unquote(raw_path), q, source_new, after, True)
    else:
        new = _relative(q, source_new) if form == "relative" else q
    if form == "root" and raw_path.startswith("/"):
        new = "/" + new
    if bracketed:
        return new
    if "%" in raw_path or any(ch in new for ch in " ()<>"):
        return quote(new, safe="/")
    return new


def _new_target(
    target: str, source_old: str, source_new: str, markdown: bool, ctx: RewriteContext
) -> tuple[str, Form] | None:
    found = ctx.before.resolve(target, source_old, markdown)
    if found is None:
        return None
    p, form = found
    q = ctx.mapping.get(p)
    if q is None:
        if source_old == source_new or form not in ("relative",):
            return None
        q = p  # the target stayed, the source moved: recompute the relative link
    return q, form


def _rewrite_line(line: str, source_old: str, source_new: str, ctx: RewriteContext) -> tuple[str, int]:
    masked = _CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line) if "`" in line else line
    edits: list[tuple[int, int, str]] = []
    if "[[" in masked:
        for m in _WIKI_RE.finditer(masked):
            inner = line[m.start(2) : m.end(2)]
            cut = min((i for i in (inner.find("#"), inner.find("|")) if i >= 0), default=len(inner))
            if cut < len(inner) and inner[cut] == "|" and inner[:cut].endswith("\\"):
                cut -= 1  # `[[t\\|alias]]`: the backslash escapes the pipe inside a table
            target = inner[:cut]
            found = _new_target(target, source_old, source_new, False, ctx)
            if found is None:
                continue
            new = _render_wiki(target, found[1], found[0], source_new, ctx.after)
            if new != target.strip():
                edits.append((m.start(2), m.start(2) + cut, new))
        masked = _WIKI_RE.sub(lambda m: " " * len(m.group(0)), masked)
    if "](" in masked:
        for m in _MD_RE.finditer(masked):
            raw = line[m.start(3) : m.end(3)]
            bracketed = raw.startswith("<") and raw.endswith(">") and len(raw) >= 2
            dest = raw[1:-1] if bracketed else raw
            if not dest or _SCHEME_RE.match(dest) or dest.startswith(("//", "#")):
                continue
            cut = min((i for i in (dest.find("#"), dest.find("?")) if i >= 0), default=len(dest))
            raw_path = dest[:cut]
            found = _new_target(unquote(raw_path), source_old, source_new, True, ctx)
            if found is None:
                continue
            new = _render_markdown(raw_path, found[1], found[0], source_new, bracketed, ctx.after)
            if new != raw_path:
                start = m.start(3) + (1 if bracketed else 0)
                edits.append((start, start + cut, new))
    if not edits:
        return line, 0
    for start, end, new in sorted(edits, reverse=True):
        line = line[:start] + new + line[end:]
    return line, len(edits)


def rewrite_links(text: str, source_old: str, source_new: str, ctx: RewriteContext) -> tuple[str, int]:
    """The text with every link to a moved file retargeted; returns (text, links changed)."""
    out: list[str] = []
    total = 0
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE_RE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        if "[" in line:
            line, n = _rewrite_line(line, source_old, source_new, ctx)
            total += n
        out.append(line)
    return "\n".join(out), total


def may_link(text_folded: str, stems: list[str]) -> bool:
    """Cheap prefilter: could this text link to any of the moved files at all?"""
    return any(s in text_folded for s in stems)


def stems_of(paths: Iterable[str]) -> list[str]:
    """Folded stems (and their %20 spellings) of moved files, for `may_link`."""
    out: set[str] = set()
    for rel in paths:
        name = rel.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
        for s in (stem, quote(stem, safe="")):
            out.add(s.casefold())
    return sorted(out)
