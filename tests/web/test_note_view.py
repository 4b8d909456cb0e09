"""The note view over the real server: a note rendered as a note (properties, table, code,
links to other notes' views, embeds), its source with line numbers, wording that says what
is shown, search marks on the matched words only, hostile notes inert, the page's weight."""

from __future__ import annotations

import re
from urllib.parse import unquote

from api.serverkit import ServerThread

from vault_agent.web.page import CSP
from web.pagekit import SETTINGS_NOTE, PageClient
from web.test_note_render import unsafe

SETTINGS = "/ui/note?path=resources/settings.md"
ASSET_RE = re.compile(r'(?:src|href)="(/ui/static/[^"]+)"')
PAGE_WEIGHT_BUDGET = 100_000  # bytes per view: its HTML and every asset it loads


def _markdown(html: str) -> str:
    return html.split('<div class="markdown">', 1)[1].rsplit("</section>", 1)[0]


def test_a_short_note_reads_whole_as_a_note(server: ServerThread) -> None:
    page = PageClient(server)
    html = page.get(SETTINGS).text
    assert "All of <em>Settings</em>" in html and "Lines " not in html
    table = html.split('<table class="properties">', 1)[1].split("</table>", 1)[0]
    assert '<th scope="row">tags</th><td><ul class="values"><li>setup</li><li>#appearance</li></ul>' in table
    assert '<th scope="row">updated</th><td>2026-01-05</td>' in table
    body = _markdown(html)
    assert unsafe(body) == []
    assert "<h2>Settings</h2>" in body and "<h3>Font size</h3>" in body and "title: Settings" not in body
    assert '<td class="align-right">16</td>' in body and '<code class="language-python">' in body
    assert "private remark" not in body
    links = dict(re.findall(r'<a class="wikilink" href="([^"]+)">([^<]+)</a>', body))
    plan = "/ui/note?path=projects%2Falpha%2Fplan.md"
    assert links[plan + "#section"] == "the alpha plan"
    assert links[plan + "&amp;heading=Goals#section"] == "the goals"
    assert "image: diagram.png" in body and "Missing note</span>" in body
    # A wikilink's heading opens that section of the other note.
    goals = page.get(unquote(plan + "&heading=goals")).text
    assert "Section <em>Goals</em> of <em>Alpha Plan</em>" in goals and "Ship the first milestone" in goals
    assert page.get(SETTINGS).headers["content-security-policy"] == CSP


def test_the_source_with_line_numbers_is_one_toggle_away(server: ServerThread) -> None:
    page = PageClient(server)
    rendered = page.get(SETTINGS + "&part=section").text
    toggle = re.search(
        r'<a class="toggle" href="([^"]+)" data-section-more>Show the Markdown source</a>', rendered
    )
    assert toggle is not None
    source = page.get(toggle.group(1).replace("&amp;", "&").split("#")[0] + "&part=section").text
    assert '<ol class="source" start="1"' in source and "<li>title: Settings</li>" in source
    assert "<li>%% a private remark %%</li>" not in source and "a private remark %%" in source  # as written
    assert "Show it rendered</a>" in source and '<div class="markdown">' not in source
    assert source.count("<li>") == len(SETTINGS_NOTE.splitlines())  # one numbered item per line
    # A section's source starts at its own first line.
    outline = server.get_json("/note-outline?path=resources/settings.md")[2]
    font = next(h["id"] for h in outline["headings"] if h["text"] == "Font size")
    part = page.get(f"{SETTINGS}&section={font}&view=source&part=section").text
    assert '<ol class="source" start="12"' in part and "<li>## Font size</li>" in part
    assert "Section <em>Font size</em> of <em>Settings</em>" in part


def test_search_marks_only_the_words_that_matched(server: ServerThread) -> None:
    page = PageClient(server)
    html = page.get("/ui/search?q=how+do+I+change+the+font+size&mode=lexical").text
    marked = {m.lower() for m in re.findall(r"<mark>([^<]+)</mark>", html)}
    assert {"font", "size"} <= marked and not marked & {"how", "do", "i", "the"}
    hit = re.search(r'<a class="title" href="([^"]+settings[^"]+)"', html)
    assert hit is not None
    note = page.get(hit.group(1).replace("&amp;", "&").split("#")[0]).text
    marked_in_note = {m.lower() for m in re.findall(r"<mark>([^<]+)</mark>", note)}
    assert "font" in marked_in_note and not marked_in_note & {"how", "the"}


def test_a_hostile_note_renders_inert(server: ServerThread) -> None:
    page = PageClient(server)
    html = page.get("/ui/note?path=projects/alpha/hostile-markdown.md").text
    body = _markdown(html)
    assert unsafe(body) == [] and "javascript:" not in " ".join(re.findall(r'href="([^"]*)"', body))
    assert "&lt;script&gt;alert(7)&lt;/script&gt;" in body and "raw block" in body
    assert "![pixel](javascript:alert(6))" in body and "image: remote" in body  # no link, no load


def test_a_rendered_note_weighs_under_the_budget(server: ServerThread) -> None:
    page = PageClient(server)
    for path in (
        SETTINGS,
        "/ui/note?path=projects/alpha/long.md",
        "/ui/note?path=resources/manual.md&section=h1-part-one-0003",
    ):
        html = page.get(path).text
        assets = sum(len(page.get(a).text.encode()) for a in sorted(set(ASSET_RE.findall(html))))
        assert len(html.encode()) + assets <= PAGE_WEIGHT_BUDGET, path
