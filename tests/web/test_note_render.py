"""A note's Markdown as the page renders it: Obsidian syntax, and hostile text that stays text.

Whatever a note holds, the HTML has only the renderer's own elements and attributes: no
script, style, image, frame or form, no `on…` or `style` attribute, and every link goes to
a note of this page, to an `http(s):`/`mailto:` address or to an anchor of the page.
"""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.linkpaths import LinkResolver
from vault_agent.query.match_terms import query_stems
from vault_agent.web.note_render import NoteLinks, render_markdown
from vault_agent.web.properties import properties, split_frontmatter
from web.pagekit import HOSTILE_MARKDOWN, SETTINGS_NOTE

NOTES = ["resources/settings.md", "projects/alpha/plan.md", "projects/beta/overview.md", "inbox/idea.md"]
ALLOWED_TAGS = {
    "p", "h2", "h3", "h4", "h5", "h6", "em", "strong", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "a", "span", "div", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "input", "sup", "section",
    "mark",
}  # fmt: skip
SAFE_HREF = ("/ui/note?", "http://", "https://", "mailto:", "#")


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    handle_startendtag = handle_starttag


def elements(html: str) -> list[tuple[str, dict[str, str]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.elements


def render(text: str, query: str = "", source: str = "resources/settings.md") -> str:
    return str(render_markdown(text, NoteLinks(source, LinkResolver(NOTES), query_stems(query))))


def _unsafe(tag: str, attrs: dict[str, str]) -> bool:
    if tag not in ALLOWED_TAGS:
        return True
    if any(k.startswith("on") or k in ("style", "src", "srcdoc", "formaction") for k in attrs):
        return True
    if "href" in attrs and not attrs["href"].startswith(SAFE_HREF):
        return True
    return tag == "input" and (attrs.get("type") != "checkbox" or "disabled" not in attrs)


def unsafe(html: str) -> list[tuple[str, dict[str, str]]]:
    """Elements the renderer must never emit, and attributes that could run or load anything."""
    return [(tag, attrs) for tag, attrs in elements(html) if _unsafe(tag, attrs)]


def test_a_note_reads_as_a_note() -> None:
    block, body, taken = split_frontmatter(SETTINGS_NOTE)
    assert block is not None and taken == 7 and body.startswith("# Settings")
    html = render(body)
    # Headings one level down (the page's h1 is the title); GFM table with alignment as classes.
    assert "<h2>Settings</h2>" in html and "<h3>Font size</h3>" in html
    assert '<th class="align-left">Option</th>' in html and '<td class="align-right">16</td>' in html
    assert '<td class="align-center">10–32</td>' in html and "<s>1.4</s>" in html
    # Code as code, its text escaped.
    assert (
        '<pre><code class="language-python">def font_size' in html and "&lt;b&gt;not bold&lt;/b&gt;" in html
    )
    # Wikilinks to the note's view (resolved as Obsidian resolves them), aliases, headings.
    assert (
        '<a class="wikilink" href="/ui/note?path=projects%2Falpha%2Fplan.md#section">the alpha plan</a>'
        in html
    )
    assert 'href="/ui/note?path=projects%2Falpha%2Fplan.md&amp;heading=Goals#section">the goals</a>' in html
    assert '<span class="wikilink unresolved" title="no note of this name">Missing note</span>' in html
    # Embeds: an image is a named placeholder (attachments are not served), a note a link.
    assert (
        '<span class="embed image" role="img" aria-label="image: diagram.png">image: diagram.png</span>'
        in html
    )
    assert (
        'Embedded note: <a class="wikilink" href="/ui/note?path=projects%2Falpha%2Fplan.md&amp;heading=Goals'
        in html
    )
    # A callout, task boxes (disabled), a hidden comment.
    assert '<div class="callout callout-tip">\n<p class="callout-title">Keyboard</p>' in html
    assert 'type="checkbox" checked=""> pick a font' in html
    assert "private remark" not in html and "%%" not in html
    assert unsafe(html) == []


def test_links_resolve_like_obsidian_and_stay_on_the_page() -> None:
    html = render(
        "[[#Font size]] [[projects/beta/overview]] [rel](../projects/beta/overview.md#Part) [[idea.md|x]]"
    )
    assert 'href="/ui/note?path=resources%2Fsettings.md&amp;heading=Font+size#section">Font size</a>' in html
    assert 'href="/ui/note?path=projects%2Fbeta%2Foverview.md#section">projects/beta/overview</a>' in html
    assert (
        'class="internal" href="/ui/note?path=projects%2Fbeta%2Foverview.md&amp;heading=Part#section">rel</a>'
        in html
    )
    assert 'href="/ui/note?path=inbox%2Fidea.md#section">x</a>' in html
    outside = render(
        "[site](https://example.com/a?b=1) <https://example.org> www.example.net mail@example.com"
    )
    assert 'class="external" href="https://example.com/a?b=1" rel="noopener noreferrer">site</a>' in outside
    assert 'href="https://example.org"' in outside and 'href="http://www.example.net"' in outside
    assert 'href="mailto:mail@example.com"' in outside
    files = render(
        "![[report.pdf]] [[report.pdf]] ![[pic.png|300]] ![[pic.png|The view]] ![alt text](img/x.png)"
    )
    assert '<span class="embed attachment">attachment: report.pdf</span>' in files
    assert (
        'class="wikilink attachment"' in files and "image: pic.png<" in files and "image: The view<" in files
    )
    assert "image: alt text<" in files and "<img" not in files
    assert unsafe(files + outside + html) == []


def test_hostile_markdown_stays_text() -> None:
    html = render(HOSTILE_MARKDOWN)
    assert unsafe(html) == []
    assert "javascript:" not in " ".join(attrs.get("href", "") for _, attrs in elements(html))
    assert "&lt;script&gt;alert(7)&lt;/script&gt;" in html and "&lt;style&gt;" in html
    assert "<b" not in html  # the alias's raw HTML is text too


def test_words_the_search_matched_are_marked_in_text_and_not_in_markup() -> None:
    html = render(
        "# The font\n\nHow the fonts look: [[plan|font plan]], `font` in code.", "how do fonts look"
    )
    assert "<h2>The <mark>font</mark></h2>" in html
    assert "How the <mark>fonts</mark> <mark>look</mark>:" in html  # never "How", "the"
    assert "><mark>font</mark> plan</a>" in html and "<code>font</code>" in html


def test_properties_read_as_written() -> None:
    block, _, _ = split_frontmatter(SETTINGS_NOTE)
    assert block is not None
    rows = [(p.key, p.values, p.is_list) for p in properties(block)]
    assert rows == [
        ("title", ["Settings"], False),
        ("tags", ["setup", "#appearance"], True),
        ("aliases", ["Preferences"], True),
        ("updated", ["2026-01-05"], False),
    ]
    nested = properties(
        'a: "x: y"\nmeta:\n  b: 1\n  c: [2]\ntext: |\n  one\n  two\n# comment\nlist: [ "p, q" , r ]\nempty:'
    )
    assert [(p.key, p.values) for p in nested] == [
        ("a", ["x: y"]),
        ("meta", ["b: 1", "c: [2]"]),
        ("text", ["one", "two"]),
        ("list", ["p, q", "r"]),
        ("empty", []),
    ]
    assert split_frontmatter("# No frontmatter\n") == (None, "# No frontmatter\n", 0)


MARKUP = st.sampled_from(
    [
        "[[", "]]", "![[", "|", "#", "[", "](", ")", "![", "<", ">", "javascript:", "JaVaScRiPt:", "data:",
        "vbscript:", "&#106;avascript:", "<script>", "<img src=x onerror=alert(1)>", '"', "'", "`", "```",
        "\n", "\n\n", "> [!note] ", "| a | b |\n|---|---|\n", "- [ ] ", "%%", "---\n", "*", "_", "~~",
        "<a href='javascript:x'>", "http://", "www.", "@", ":", "style=", "on", "=",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(MARKUP, st.text(max_size=6)), max_size=40).map("".join))
def test_no_note_text_makes_markup_that_runs_or_loads(text: str) -> None:
    html = render(text, "alert script")
    assert unsafe(html) == []
    hrefs = [attrs["href"].strip().lower() for _, attrs in elements(html) if "href" in attrs]
    assert [h for h in hrefs if h.startswith(("javascript:", "vbscript:", "data:", "file:"))] == []
