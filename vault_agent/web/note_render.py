"""A note's Markdown as HTML for the page: markdown-it-py with Obsidian's syntax, safely.

- CommonMark plus GFM tables, strikethrough, task lists and autolinks (markdown-it-py's own
  rules and `mdit-py-plugins`), footnotes, and callouts (`> [!note] Title`, GitHub's
  alerts included).
- **Untrusted text.** Raw HTML in a note is shown as text (`html=False`); a link goes
  somewhere only when it is `http:`, `https:` or `mailto:`, or a path in the vault (a
  `javascript:` or `data:` link stays text); no image is loaded (an image, local or not,
  becomes a named placeholder: attachments are not served); table alignment becomes a
  class, never a `style` attribute (the page's CSP forbids inline style).
- **Wikilinks** `[[Note]]`, `[[Note|alias]]`, `[[Note#Heading]]`, `[[#Heading]]` and
  Markdown links to notes open that note's view on the page, resolved the way Obsidian
  resolves them (`linkpaths.LinkResolver` over the snapshot's notes); a target that is no
  note is shown as an unresolved link. **Embeds** `![[…]]` of a note are links to it; of an
  image or another file, a placeholder naming it.
- `%% comments %%` are hidden; headings go one level down (the page's own `h1` is the
  note's title); words the search matched are marked (`render.highlight`).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlencode

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin

from vault_agent.linkpaths import LinkResolver
from vault_agent.note_syntax import blank_comments
from vault_agent.web.render import highlight

SAFE_SCHEMES = ("http:", "https:", "mailto:")
IMAGE_EXTENSIONS = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "avif", "tif", "tiff", "ico"}
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_CALLOUT = re.compile(r"^\[!([A-Za-z][\w-]*)\]([+-]?)[ \t]*(.*)$")
_SIZE = re.compile(r"^\d+(?:x\d+)?$")  # `![[pic.png|300]]`, `|640x480`: a size, not a name
_ALIGN = re.compile(r"text-align:\s*(left|right|center)")


@dataclass
class NoteLinks:
    """Where the links of one note go on the page (resolved in one snapshot's notes)."""

    source: str  # the note's vault path
    resolver: LinkResolver
    stems: frozenset[str] = field(default_factory=frozenset)  # words to mark (query stems)

    def note_href(self, path: str, heading: str | None = None) -> str:
        query = {"path": path} | ({"heading": heading} if heading else {})
        return "/ui/note?" + urlencode(query) + "#section"

    def wikilink(self, target: str) -> str | None:
        """The page address of a wikilink target (`Note`, `Note#Heading`, `#Heading`), or None."""
        name, _, heading = target.partition("#")
        heading = "" if heading.startswith("^") else heading  # a block id: the note itself
        if not name.strip():
            return self.note_href(self.source, heading or None)
        found = self.resolver.resolve(name, self.source, markdown=False)
        return self.note_href(found[0], heading or None) if found else None

    def markdown_link(self, href: str) -> str | None:
        """The page address of a Markdown link to a vault note (`other.md`, `../x.md#Part`)."""
        path, _, heading = unquote(href).partition("#")
        if not path:
            return None  # `#part` alone: an anchor of this page (footnotes)
        found = self.resolver.resolve(path, self.source, markdown=True)
        return self.note_href(found[0], heading or None) if found else None


def _extension(target: str) -> str:
    name = posixpath.basename(target.split("#", 1)[0].split("|", 1)[0].strip())
    return name.rsplit(".", 1)[1].lower() if "." in name else ""


def _split_wikilink(inner: str) -> tuple[str, str]:
    """`Note|alias` (or `Note\\|alias`, escaped inside a table) → (target, alias)."""
    target, _, alias = inner.replace("\\|", "|").partition("|")
    return target.strip(), alias.strip()


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[…]]` and `![[…]]` on one line, before markdown-it's own link and image rules."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return False
    start = pos + (3 if embed else 2)
    end = src.find("]]", start)
    inner = src[start:end] if end >= 0 else ""
    if not inner.strip() or "\n" in inner or "[[" in inner:
        return False
    if not silent:
        target, alias = _split_wikilink(inner)
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target, "alias": alias, "embed": embed}
    state.pos = end + 2
    return True


def _callouts(state: Any) -> None:
    """Core rule: a blockquote whose first line is `[!type] Title` is a callout (Obsidian's,
    GitHub's alerts too): the type and title go to the blockquote's token, off its text."""
    tokens: list[Token] = state.tokens
    for i, token in enumerate(tokens[:-2]):
        if token.type != "blockquote_open" or tokens[i + 1].type != "paragraph_open":
            continue
        inline = tokens[i + 2]
        first, _, rest = inline.content.partition("\n")
        match = _CALLOUT.match(first)
        if inline.type == "inline" and match:
            kind = match.group(1).lower()
            token.meta = {"callout": kind, "title": match.group(3) or kind.capitalize()}
            inline.content = rest
            if not rest.strip():  # only the title line: no empty paragraph
                tokens[i + 1].hidden = tokens[i + 3].hidden = True


class _PageRenderer(RendererHTML):
    """markdown-it's HTML renderer with the page's rules (see the module doc)."""

    def _links(self, env: EnvType) -> NoteLinks:
        links = env["links"]
        assert isinstance(links, NoteLinks)
        return links

    def text(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return str(highlight(tokens[idx].content, self._links(env).stems))

    def heading_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return f"<h{min(6, int(tokens[idx].tag[1]) + 1)}>"

    def heading_close(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return f"</h{min(6, int(tokens[idx].tag[1]) + 1)}>\n"

    def blockquote_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        meta = tokens[idx].meta
        env["quotes"].append(bool(meta.get("callout")))  # what its close must end
        if not meta.get("callout"):
            return "<blockquote>\n"
        kind = re.sub(r"[^a-z0-9-]", "", meta["callout"])
        title = str(highlight(meta["title"], self._links(env).stems))
        return f'<div class="callout callout-{kind}">\n<p class="callout-title">{title}</p>\n'

    def blockquote_close(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return "</div>\n" if env["quotes"].pop() else "</blockquote>\n"

    def link_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        href = str(token.attrGet("href") or "")
        target: str | None
        if href.lower().startswith(SAFE_SCHEMES):
            target = href
        elif href.startswith("#"):
            target = href  # a footnote's anchor on this page
        else:
            target = self._links(env).markdown_link(href) if not _SCHEME.match(href) else None
        env["links_open"].append(target is not None)  # what its close must end (links never nest)
        if target is None:
            return '<span class="link unresolved">'
        rel = ' rel="noopener noreferrer"' if target.lower().startswith(SAFE_SCHEMES) else ""
        kind = "external" if rel else "internal"
        return f'<a class="{kind}" href="{escape(target)}"{rel}>'

    def link_close(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return "</a>" if env["links_open"].pop() else "</span>"

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        src = unquote(str(token.attrGet("src") or ""))
        name = token.content or posixpath.basename(src.split("?", 1)[0]) or "image"
        return _placeholder("image", name)

    def wikilink(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        meta = tokens[idx].meta
        target, alias, embed = meta["target"], meta["alias"], meta["embed"]
        ext = _extension(target)
        if embed and ext in IMAGE_EXTENSIONS:
            return _placeholder("image", target if not alias or _SIZE.match(alias) else alias)
        if ext not in ("", "md"):  # an attachment (a PDF, audio): named, never served
            if embed:
                return _placeholder("attachment", target)
            name = escape(alias or target)
            return f'<span class="wikilink attachment" title="an attachment: the page does not serve it">{name}</span>'
        href = self._links(env).wikilink(target)
        label = alias or target.replace("#", " › ").strip(" ›")
        shown = str(highlight(label, self._links(env).stems))
        if href is None:
            return f'<span class="wikilink unresolved" title="no note of this name">{shown}</span>'
        link = f'<a class="wikilink" href="{escape(href)}">{shown}</a>'
        return f'<span class="embed note">Embedded note: {link}</span>' if embed else link

    def th_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return _cell("th", tokens[idx])

    def td_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return _cell("td", tokens[idx])


def _cell(tag: str, token: Token) -> str:
    """A table cell with its alignment as a class (a `style` attribute would break the CSP)."""
    match = _ALIGN.search(str(token.attrGet("style") or ""))
    return f'<{tag} class="align-{match.group(1)}">' if match else f"<{tag}>"


def _placeholder(kind: str, name: str) -> str:
    """An attachment the page does not serve, named: "image: diagram.png"."""
    label = f"{escape(kind)}: {escape(name)}"
    role = f' role="img" aria-label="{label}"' if kind == "image" else ""
    return f'<span class="embed {kind}"{role}>{label}</span>'


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark", {"html": False, "linkify": False, "typographer": False}, renderer_cls=_PageRenderer
    )
    md.enable(["table", "strikethrough"])
    md.options["tasklists"] = True  # markdown-it-py >= 4.1: disabled checkboxes
    md.use(gfm_autolink_plugin).use(footnote_plugin, inline=False)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.core.ruler.after("block", "callouts", _callouts)
    md.validateLink = lambda url: not _SCHEME.match(url) or url.lower().startswith(SAFE_SCHEMES)  # type: ignore[method-assign]
    return md


def render_markdown(text: str, links: NoteLinks) -> Markup:
    """A note's Markdown (a section, or the whole note without its frontmatter) as safe HTML.

    Every character of `text` reaches the page escaped or as markup of our own rules."""
    env = {"links": links, "quotes": [], "links_open": []}
    return Markup(_parser().render(blank_comments(text), env))
