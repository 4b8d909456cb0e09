"""The web page in a real browser (the system's headless Chromium through Playwright) against
a real `vault-agent serve --watch` process and a real MCP SDK client.

Flows: sign in with a one-time link from `vault-agent web` (it leaves the address bar and
works once; the cookie is HttpOnly and SameSite=Strict), health naming an unreadable note and why, search and open a hit's
section, an agent's message arriving live, answering an agent's question, undoing a
conversation's two writes after reading the diff, a forged cross-site POST refused (and a
POST without the CSRF token). Each view's screenshot lands in ops/out/screenshots/.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from web.browserkit import CHROMIUM, CHROMIUM_FLAGS, Agent, Served, agent, chromium_or_skip, screenshot
from web.pagekit import EXTRA_NOTES

LOCKED = "notes/locked.md"
TIMEOUT_MS = 30_000
ERRORS: dict[int, list[str]] = {}  # per page: script errors and failed loads (none expected)
REQUESTED: dict[int, list[str]] = {}  # per page: every URL the browser asked for


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    chromium_or_skip()
    one = Served(EXTRA_NOTES, [LOCKED])
    try:
        yield one
    finally:
        one.stop()


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Any]:
    sync_playwright = chromium_or_skip()
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, served: Served) -> Iterator[Any]:
    """A signed-in page in a fresh browser context (its own cookies)."""
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    one = context.new_page()
    errors = ERRORS.setdefault(id(one), [])
    requested = REQUESTED.setdefault(id(one), [])
    one.on("request", lambda request: requested.append(request.url))
    one.on("pageerror", lambda exc: errors.append(str(exc)))
    one.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    one.goto(served.sign_in_link())
    one.wait_for_url(served.base + "/")
    try:
        yield one
    finally:
        context.close()
        ERRORS.pop(id(one), None)
        REQUESTED.pop(id(one), None)
    assert errors == []  # no script error, no CSP violation


@pytest.fixture
def agent_session(served: Served) -> Iterator[Agent]:
    yield from agent(served)


def test_a_one_time_link_signs_in_once_and_leaves_the_address(browser: Any, served: Served) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(served.web_url)  # what `serve` printed: no secret, so it asks to sign in
    assert page.locator("h1").inner_text() == "Sign in"
    assert "vault-agent web" in page.locator("main").inner_text()
    screenshot(page, "01-sign-in")
    link = served.sign_in_link()
    page.goto(link)
    page.wait_for_url(served.base + "/")
    assert "once" not in page.url and page.locator("h1").inner_text() == "Health of the index"
    (cookie,) = [c for c in context.cookies() if c["name"] == f"vault_agent_{served.port}"]
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    assert page.evaluate("document.cookie") == ""  # no script can read the session
    assert served.token not in page.content()
    context.close()
    # The same link in another browser: refused, with what to run instead.
    other = browser.new_context()
    again = other.new_page()
    response = again.goto(link)
    assert response is not None and response.status == 401
    assert again.locator("h1").inner_text() == "Sign in"
    assert "used already" in again.locator("main").inner_text()
    assert "vault-agent web" in again.locator("main").inner_text()
    assert [c for c in other.cookies() if c["name"] == f"vault_agent_{served.port}"] == []
    screenshot(again, "01-sign-in-used-link")
    other.close()


def test_health_names_the_unreadable_note_and_why(page: Any, served: Served) -> None:
    row = page.locator("table.missing tr", has_text=LOCKED)
    assert "unreadable" in row.inner_text() and "permissions deny reading it" in row.inner_text()
    page.locator("#live-freshness").filter(has_text="index").wait_for()  # the live stream's status
    assert page.locator("[data-count=noteCount]").inner_text() != "0"
    # Works offline: everything the page loaded came from the server itself.
    assert [u for u in REQUESTED[id(page)] if not u.startswith(served.base + "/")] == []
    assert any("/ui/static/app.js" in u for u in REQUESTED[id(page)])
    screenshot(page, "02-health")
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate(
        "document.documentElement.scrollWidth <= window.innerWidth + 1"
    )  # no sideways scroll
    screenshot(page, "02-health-phone")


def test_search_as_you_type_then_open_a_hits_section(page: Any, served: Served) -> None:
    page.get_by_role("link", name="Search").click()
    page.locator("#q").press_sequentially("apples", delay=30)
    hit = page.locator(".hit", has_text="projects/alpha/sections.md")
    hit.wait_for()
    assert "apples" in page.url  # the address follows what was typed
    assert hit.locator("mark").first.inner_text().lower() == "apples"
    hit.locator("summary", has_text="Explain").click()
    assert "score" in hit.locator(".explain").inner_text()
    screenshot(page, "03-search")
    hit.locator("a.title").click()
    section = page.locator("#section")
    section.filter(has_text="first body apples").wait_for()
    assert "second body plums" not in section.inner_text()
    screenshot(page, "04-note")
    page.get_by_role("link", name="Second part").click()  # the next section, without a reload
    section.filter(has_text="second body plums").wait_for()
    assert "apples" not in section.inner_text() and "section=h2-second-part" in page.url


def test_a_note_reads_as_a_note_with_its_source_a_toggle_away(page: Any, served: Served) -> None:
    dialogs: list[str] = []

    def dialog(d: Any) -> None:  # an alert() from note text would land here
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.goto(served.base + "/ui/note?path=resources/settings.md&q=font+size")
    body = page.locator(".markdown")
    assert body.locator("table td.align-right", has_text="16").count() == 1
    assert body.locator("pre code.language-python").inner_text().startswith("def font_size")
    assert page.locator("table.properties th", has_text="tags").count() == 1
    assert body.locator(".embed.image", has_text="diagram.png").count() == 1
    assert body.locator(".callout-tip .callout-title").inner_text() == "Keyboard"
    assert body.locator("mark").first.inner_text().lower() in ("font", "size")
    assert "private remark" not in body.inner_text()
    screenshot(page, "09-note-rendered")
    page.get_by_role("link", name="Show the Markdown source").click()  # swapped in, no reload
    page.locator("ol.source").wait_for()
    assert page.locator("ol.source li").first.inner_text() == "---"
    assert "view=source" in page.url
    screenshot(page, "10-note-source")
    page.get_by_role("link", name="Show it rendered").click()
    body.wait_for()
    body.get_by_role("link", name="the goals").click()  # a wikilink to a heading of another note
    page.locator("#section .meta", has_text="Section Goals of Alpha Plan").wait_for()
    page.goto(served.base + "/ui/note?path=projects/alpha/hostile-markdown.md")
    page.locator(".markdown h2", has_text="Hostile markdown").wait_for()
    for link in page.locator(".markdown a").all():  # none of them runs anything
        assert not (link.get_attribute("href") or "").lower().startswith(("javascript:", "data:"))
    assert page.locator(".markdown script, .markdown img, .markdown style, .markdown iframe").count() == 0
    assert page.evaluate("getComputedStyle(document.body).display") != "none"
    screenshot(page, "11-note-hostile")
    assert dialogs == []


def test_an_agents_message_arrives_live(page: Any, agent_session: Agent) -> None:
    first = agent_session.data("send_message", {"text": "Starting to tidy the alpha plan"})
    page.goto(page.url.rsplit("/", 1)[0] + f"/ui/conversations/{first['conversation_id']}")
    page.locator("#live-freshness").filter(has_text="index").wait_for()  # the stream is open
    agent_session.data("send_message", {"text": "Halfway there: 3 notes left"})
    page.locator("li.entry.live", has_text="Halfway there: 3 notes left").wait_for()
    screenshot(page, "05-conversation-live")


def test_answer_an_agents_question_from_the_page(page: Any, agent_session: Agent) -> None:
    started = agent_session.data("send_message", {"text": "I have a question for you"})
    page.goto(page.url.rsplit("/", 1)[0] + f"/ui/conversations/{started['conversation_id']}")
    page.locator("#live-freshness").filter(has_text="index").wait_for()
    waiting = agent_session.call(
        "send_message", {"text": "Which folder should the summary go to?", "expect_reply": True}
    )
    box = page.get_by_label("Your answer")
    box.wait_for()  # the question arrives live
    box.fill("Put it in resources/summaries")
    screenshot(page, "06-question")
    page.get_by_role("button", name="Send the answer").click()
    page.locator(".done", has_text="delivered").wait_for()
    answer = waiting.result(60)["data"]
    assert (answer["reply"], answer["reply_via"]) == ("Put it in resources/summaries", "http")


def test_undo_two_writes_after_confirming_the_diff(page: Any, agent_session: Agent, served: Served) -> None:
    plan = served.vault / "projects/alpha/plan.md"
    before = plan.read_bytes()
    started = agent_session.data("send_message", {"text": "Rewriting the plan and filing an idea"})
    agent_session.data(
        "vault_write",
        {"path": "projects/alpha/plan.md", "content": "# Plan\n\nall new\n", "mode": "overwrite"},
    )
    agent_session.data(
        "vault_create", {"path": "inbox/agent-idea.md", "content": "# Idea\n\nfrom the agent\n"}
    )
    page.goto(page.url.rsplit("/", 1)[0] + f"/ui/conversations/{started['conversation_id']}")
    page.get_by_role("link", name="Undo its writes…").click()
    diffs = page.locator("pre.diff")
    assert diffs.count() == 2 and "-all new" in diffs.first.inner_text()
    assert (served.vault / "inbox/agent-idea.md").exists()  # the dry run changed nothing
    screenshot(page, "07-undo-dry-run")
    page.get_by_role("button", name="Undo 2 file(s)").click()
    page.locator(".done", has_text="Undone: 2 file(s)").wait_for()
    screenshot(page, "08-undo-done")
    assert plan.read_bytes() == before and not (served.vault / "inbox/agent-idea.md").exists()


class _Attacker(http.server.BaseHTTPRequestHandler):
    target = ""

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        body = (
            f'<form method="post" action="{self.target}"><input name="text" value="forged">'
            "<button>Win a prize</button></form>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def test_a_forged_cross_site_post_is_refused(page: Any, agent_session: Agent, served: Served) -> None:
    started = agent_session.data("send_message", {"text": "Still working"})
    end = f"{served.base}/ui/conversations/{started['conversation_id']}/end"
    _Attacker.target = end
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://localhost:{evil.server_address[1]}/")  # another site, same browser
        with page.expect_response(end) as forged:
            page.get_by_role("button", name="Win a prize").click()
        assert forged.value.status in (401, 403)
    finally:
        evil.shutdown()
        evil.server_close()
    page.goto(served.base + "/")
    # The page's own origin, but without the CSRF token: refused too.
    status = page.evaluate(f"fetch({end!r}, {{method: 'POST'}}).then(r => r.status)")
    assert status == 403
    shown = agent_session.data("get_conversation", {"id": started["conversation_id"]})
    assert shown["conversation"]["status"] == "open"
    assert len(ERRORS[id(page)]) == 3 and all("40" in e for e in ERRORS[id(page)])  # the refusals, no more
    ERRORS[id(page)].clear()


def test_keyboard_reaches_every_view(page: Any) -> None:
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    names = []
    for _ in range(4):
        page.keyboard.press("Tab")
        names.append(page.evaluate("document.activeElement.textContent.trim()"))
    assert names == ["Health", "Search", "Conversations", "Sign out"]
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # focus is visible
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")  # "Conversations" by keyboard
    page.wait_for_url("**/ui/conversations")
