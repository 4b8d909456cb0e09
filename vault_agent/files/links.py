"""Link-safe moves: find the links that resolve to moved files and rewrite their targets.

Resolution follows Obsidian, conservatively (a link we cannot resolve for sure is left
alone), case-insensitively like Obsidian:
- wikilinks/embeds `[[t]]`, `[[t|alias]]`, `[[t#h]]`, `![[t]]`: `./`/`../` → relative to
  the source folder; a target with '/' → vault path (with or without `.md`), then relative
  to the source folder; a bare name → the unique file of that name (`t` or `t.md`), else
  the one in the source's own folder, else unresolved;
- Markdown links `[x](t)`, `![x](t)`: relative to the source folder, then vault path;
  `%xx` decoded; URLs, `#anchor`-only and `mailto:` are not vault links.
Rewriting keeps each link's style: a bare name stays a bare name while it is unique after
the move (else it becomes the vault path), a path stays a path, a relative link is
recomputed from the (possibly moved) source, `.md` is kept or omitted as written, anchors,
aliases and titles are untouched. Fenced code blocks and code spans are skipped.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote

_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")
_MD_RE = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_CODE_SPAN_RE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")

Form = Literal["name", "path", "relative", "root"]


def _fold(path: str) -> str:
    return path.casefold()


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _join(folder: str, target: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(folder, target)) if folder else posixpath.normpath(target)
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return "" if joined == "." else joined


class LinkIndex:
    """The vault's files, looked up the way Obsidian resolves link targets."""

    def __init__(self, files: Iterable[str]) -> None:
        self.by_path: dict[str, list[str]] = {}
        self.by_name: dict[str, list[str]] = {}
        for rel in files:
            self.by_path.setdefault(_fold(rel), []).append(rel)
            self.by_name.setdefault(_fold(rel.rsplit("/", 1)[-1]), []).append(rel)

    def _path(self, rel: str | None) -> str | None:
        if rel is None:
            return None
        for key in (_fold(rel), _fold(rel + ".md")):
            hits = self.by_path.get(key, [])
            if len(hits) == 1:
                return hits[0]
        return None

    def name_count(self, name: str) -> int:
        return len(self.by_name.get(_fold(name), []))

    def _name(self, name: str, source: str) -> str | None:
        hits = self.by_name.get(_fold(name), []) or self.by_name.get(_fold(name + ".md"), [])
        if len(hits) == 1:
            return hits[0]
        same = [h for h in hits if _folder(h) == _folder(source)]
        return same[0] if len(same) == 1 else None

    def resolve(self, target: str, source: str, markdown: bool) -> tuple[str, Form] | None:
        """The vault file a link target names from `source`, and how it was written."""
        t = target.strip()
        if not t:
            return None
        if markdown:
            rel = self._path(_join(_folder(source), t))
            if rel is not None:
                return rel, "relative"
            rel = self._path(_join("", t.lstrip("/")))
            return (rel, "root") if rel is not None else None
        if t.startswith(("./", "../")):
            rel = self._path(_join(_folder(source), t))
            return (rel, "relative") if rel is not None else None
        if "/" in t:
            rel = self._path(_join("", t.lstrip("/")))
            if rel is not None:
                return rel, "path"
            rel = self._path(_join(_folder(source), t))
            return (rel, "relative") if rel is not None else None
        rel = self._name(t, source)
        return (rel, "name") if rel is not None else None


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


def _render_wiki(old: str, form: Form, q: str, source_new: str, after: LinkIndex) -> str:
    if form == "name":
        name = q.rsplit("/", 1)[-1]
        return _strip_md(name if after.name_count(name) == 1 else q, old)
    if form == "relative":
        rel = _relative(q, source_new)
        if old.strip().startswith("./") and not rel.startswith("../"):
            rel = "./" + rel
        return _strip_md(rel, old)
    return _strip_md(q, old)


def _render_markdown(raw_path: str, form: Form, q: str, source_new: str, bracketed: bool) -> str:
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
            new = _render_markdown(raw_path, found[1], found[0], source_new, bracketed)
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
