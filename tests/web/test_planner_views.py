"""The Tasks and Bases views over the real server: each list is the tasks operation's answer
(overdue, due in the next 7 days, open by note), a query or a block runs as written and a bad
one shows INVALID_QUERY plainly; the bases, a view as a table (columns in the view's order,
groups, summaries); links to the notes' views; hostile text inert; sign-in and CSP like every
view; page weight within 100 KB on a larger generated vault."""

from __future__ import annotations

import html as html_text
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from api.serverkit import ServerThread, build_fixture_vault, serving

from vault_agent.web.page import CSP
from vault_agent.web.views_bases import CELL_CHARS
from vault_agent.web.views_tasks import DESCRIPTION_CHARS, LIST_PAGE, PREVIEW
from web.pagekit import HOSTILE, PageClient, day, element_tags, exchange

PAGE_WEIGHT_BUDGET = 100_000  # bytes per view: its HTML and every asset it loads
ASSET_RE = re.compile(r'(?:src|href)="(/ui/static/[^"]+)"')
DESCRIPTION_RE = re.compile(r'<span class="description">([^<]*)</span>')


def section(html: str, name: str) -> str:
    """The HTML of one `<section id=name>`."""
    return html.split(f'<section id="{name}"', 1)[1].split("</section>", 1)[0]


def descriptions(html: str) -> list[str]:
    return [html_text.unescape(d) for d in DESCRIPTION_RE.findall(html)]


def note_links(html: str) -> list[str]:
    return [
        str(t[1]["href"]) for t in element_tags(html) if t[0] == "a" and "/ui/note?" in (t[1]["href"] or "")
    ]


def weight(page: PageClient, path: str) -> int:
    """Bytes of a view: its HTML and every asset it loads."""
    html = page.get(path).text
    assets = sum(len(page.get(a).text.encode()) for a in sorted(set(ASSET_RE.findall(html))))
    return len(html.encode()) + assets


def inert(html: str) -> None:
    """Hostile note text shows as text: no element, no handler, no style from it."""
    assert HOSTILE not in html
    tags = element_tags(html)
    assert [t for t in tags if t[0] in ("img", "style", "iframe")] == []
    assert [t for t in tags if any(a.startswith("on") or a == "style" for a in t[1])] == []
    assert [t for t in tags if t[0] == "script" and set(t[1]) != {"src", "defer"}] == []


# ----------------------------------------------------------------------------- tasks
def test_tasks_lists_overdue_this_week_and_open_by_note(server: ServerThread) -> None:
    html = PageClient(server).get("/ui/tasks").text
    assert descriptions(section(html, "overdue")) == ["file taxes", "pay the rent"]  # by due date
    assert descriptions(section(html, "week")) == ["water the plants", "send the report"]  # day 7 is not
    by_note = section(html, "open")
    assert "buy milk" not in by_note  # done
    notes = re.findall(r'<h3 class="note-name"><a href="[^"]+">([^<]+)</a>', by_note)
    assert notes == sorted(notes) and {"tasks/chores.md", "tasks/work.md"} <= set(notes)
    assert "plan next quarter" in by_note and "fix the bike" in by_note
    counts = server.get_json("/tasks?limit=1")[2]["data"]["counts"]
    assert f"{counts['open']:,} open, {counts['overdue']:,} overdue, today {day(0)}" in html
    assert "/ui/note?path=tasks/work.md&amp;line=7#section" in section(html, "overdue")  # to the task's line
    inert(html)


def test_each_list_is_the_tasks_operations_answer(server: ServerThread) -> None:
    page = PageClient(server)
    api = server.get_json(f"/tasks?overdue=true&sort=due&limit={PREVIEW}")[2]["data"]
    assert descriptions(section(page.get("/ui/tasks").text, "overdue")) == [
        t["description"] for t in api["results"]
    ]
    week = server.get_json(f"/tasks?status=open&sort=due&due=in+{day(0)}+{day(6)}")[2]["data"]
    alone = page.get("/ui/tasks?show=week").text
    assert descriptions(section(alone, "week")) == [t["description"] for t in week["results"]]
    assert 'id="overdue"' not in alone and 'id="query"' not in alone  # one list alone
    assert page.get("/ui/tasks?show=sideways").status == 400
    every = server.get_json("/tasks?status=open&sort=path")[2]["data"]["results"]
    assert descriptions(section(page.get("/ui/tasks?show=open").text, "open")) == [
        t["description"] for t in every
    ]


def test_the_open_list_pages_with_the_operations_cursor(big_server: ServerThread) -> None:
    page = PageClient(big_server)
    api = big_server.get_json(f"/tasks?status=open&sort=path&limit={LIST_PAGE}")[2]["data"]
    after = big_server.get_json(f"/tasks?status=open&sort=path&limit={LIST_PAGE}&cursor={api['next_cursor']}")
    every = api["results"] + after[2]["data"]["results"]  # pages stop early at 50,000 characters
    first = page.get("/ui/tasks?show=open").text
    more = re.search(r'href="(/ui/tasks\?show=open&amp;cursor=[^"]+)">Next page', first)
    assert more is not None
    second = page.get(more.group(1).replace("&amp;", "&")).text
    seen = descriptions(section(first, "open")) + descriptions(section(second, "open"))
    assert seen == [cut(t["description"]) for t in every]


def cut(text: str) -> str:
    return text if len(text) <= DESCRIPTION_CHARS else text[:DESCRIPTION_CHARS] + "…"


def test_a_query_runs_as_written_with_its_groups(server: ServerThread) -> None:
    page = PageClient(server)
    query = "not done\ngroup by filename"
    html = page.get(f"/ui/tasks?query={quote(query)}").text
    answer = section(html, "query")
    api = server.get_json(f"/tasks?query={quote(query)}")[2]["data"]
    groups = re.findall(r'<h3 class="group">([^<]+) <span class="count">', answer)
    assert groups == [" › ".join(g["names"]) for g in api["groups"]] and "chores" in " ".join(groups)
    assert ">not done\ngroup by filename</textarea>" in answer  # the form keeps what was run
    part = page.get(f"/ui/tasks?query={quote(query)}&part=answer").text
    assert "<html" not in part and '<h3 class="group">' in part


def test_a_block_runs_as_its_note_holds_it(server: ServerThread) -> None:
    answer = section(PageClient(server).get("/ui/tasks?block=tasks/work.md%231").text, "query")
    assert "The block 1 of" in answer and "(under Queries)" in answer
    assert descriptions(answer) == ["file taxes", "pay the rent"]  # not done, due before tomorrow


def test_a_query_that_does_not_read_says_why_plainly(server: ServerThread) -> None:
    page = PageClient(server)
    bad = page.get("/ui/tasks?query=due+whenever")
    assert bad.status == 400
    alert = section(bad.text, "query").split('<div class="error" role="alert">', 1)[1].split("</div>")[0]
    assert alert.startswith("<strong>INVALID_QUERY</strong>: tasks query: line 1:")
    assert 'id="overdue"' in bad.text  # the rest of the view is still there
    both = page.get("/ui/tasks?block=nope.md%231")
    assert both.status == 404 and "NOT_FOUND" in section(both.text, "query")
    hostile = page.get(f"/ui/tasks?query={quote(HOSTILE)}")
    assert hostile.status == 400
    inert(hostile.text)


# ----------------------------------------------------------------------------- bases
def test_bases_lists_every_base_and_its_views(server: ServerThread) -> None:
    html = PageClient(server).get("/ui/bases").text
    api = server.get_json("/bases")[2]["data"]
    for base in api["bases"]:
        assert f'href="/ui/bases?path={quote(base["path"])}"' in html
        for view in base["views"]:
            link = f'href="/ui/bases?path={quote(base["path"])}&amp;view={view["index"]}"'
            assert (link in html) == view["runs"]  # a map view is named, not linked
    assert "On a map" in html


def test_a_view_runs_as_a_table_in_its_columns_order(server: ServerThread) -> None:
    html = PageClient(server).get("/ui/bases?path=Reading.base&view=All+books").text
    api = server.get_json("/bases?path=Reading.base&view=All+books")[2]["data"]
    heads = re.findall(r'<th scope="col" title="([^"]+)">', html)
    assert heads == [c["id"] for c in api["columns"]] == ["file.name", "author", "rating"]
    assert note_links(html) == [f"/ui/note?path={r['path']}" for r in api["rows"]]  # rating DESC
    assert re.search(
        r'<tfoot><tr class="summary"><th scope="row">Summary</th><td></td><td>3</td></tr></tfoot>', html
    )  # Average
    inert(html)


def test_a_grouped_view_shows_each_group_and_its_summaries(server: ServerThread) -> None:
    page = PageClient(server)
    html = page.get("/ui/bases?path=Reading.base&view=1").text
    groups = re.findall(r'<th scope="rowgroup" colspan="3">([^<]+) <span class="count">\((\d+)\)', html)
    assert groups == [("done", "2"), ("reading", "1")]
    assert re.findall(r'<tr class="summary"><th scope="row">Summary</th><td>(\d+)</td>', html) == [
        "6",
        "3",
    ]  # Sum per group
    assert '<tfoot><tr class="summary"><th scope="row">Every group</th><td>9</td>' in html
    assert '<th scope="col">Note</th>' in html  # no name column: a leading link to the note
    first = page.get("/ui/bases?path=Reading.base").text  # the first view that runs
    assert '<h2 id="view-h">All books</h2>' in first
    missing = page.get("/ui/bases?path=nope.base")
    assert missing.status == 404 and "NOT_FOUND" in missing.text


# ----------------------------------------------------------------------------- rules
def test_both_views_need_sign_in_and_carry_the_csp(server: ServerThread) -> None:
    page = PageClient(server)
    for path in ("/ui/tasks", "/ui/bases", "/ui/bases?path=Reading.base&view=1", "/ui/tasks?query=x"):
        anonymous = exchange(server, "GET", path)
        assert anonymous.status == 401 and "Sign in" in anonymous.text
        assert exchange(
            server, "GET", path + "&part=answer" if "?" in path else path + "?part=table"
        ).text == ("sign in first")
        for resp in (anonymous, page.get(path)):
            assert resp.headers["content-security-policy"] == CSP
            assert resp.headers["cache-control"] == "no-store"
    bearer = exchange(server, "GET", "/ui/tasks", headers={"Authorization": f"Bearer {server.token}"})
    assert bearer.status == 401  # the API's token never opens the page


# ----------------------------------------------------------------------------- weight
def big_vault_notes(notes: int = 120, tasks_per_note: int = 12, wide: int = 20) -> dict[str, str]:
    """A larger vault: many notes of long tasks (overdue, this week, later) and a wide base."""
    long = "word " * 400
    most = "word " * (DESCRIPTION_CHARS // 5)  # just over what the page shows: the most a task weighs
    out: dict[str, str] = {}
    for n in range(notes):
        lines = [f"- [ ] task {n}.{k} {most} 📅 {day(k % 9 - 3)} ⏫" for k in range(tasks_per_note)]
        props = "".join(f"p{c}: '{long}'\n" for c in range(wide))
        out[f"big/n{n:04d}.md"] = f"---\ntags: [big]\n{props}---\n# Note {n}\n\n" + "\n".join(lines) + "\n"
    columns = ", ".join(["file.name", *(f"p{c}" for c in range(wide))])
    out["Big.base"] = (
        f'filters: file.hasTag("big")\nviews:\n  - type: table\n    name: Wide\n    order: [{columns}]\n'
        "    groupBy:\n      property: p0\n"
    )
    return out


@pytest.fixture(scope="module")
def big_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = build_fixture_vault(Path(tmp_path_factory.mktemp("big")), extra=big_vault_notes())
    with serving(settings) as thread:
        yield thread


def test_each_view_weighs_under_the_budget_on_a_larger_vault(big_server: ServerThread) -> None:
    page = PageClient(big_server)
    paths = [
        "/ui/tasks",
        "/ui/tasks?show=open",
        "/ui/tasks?show=week",
        f"/ui/tasks?query={quote('not done')}",
        "/ui/tasks?block=nope.md%231",
        "/ui/bases",
        "/ui/bases?path=Big.base&view=0",
    ]
    weights = {path: weight(page, path) for path in paths}
    print("page weights (bytes):", weights)  # noqa: T201 - the figure the docs quote (pytest -s)
    assert all(w <= PAGE_WEIGHT_BUDGET for w in weights.values()), weights
    table = page.get("/ui/bases?path=Big.base&view=0").text
    assert "Next page" in table and f"{'word ' * 40}"[: CELL_CHARS - 1] in table  # paged, cells cut
    assert "…" in page.get("/ui/tasks").text  # long descriptions cut
