"""The page's views over the real server: what each shows, read through the same operations
as every surface; search filters and explain (pending other work: skipped with one line);
a note's sections; conversations with replies, end and undo; the live stream."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from api.serverkit import CANARY, LogCapture, ServerThread
from conversations.kit import read_bytes
from testkit import wait_until

from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.web.views_search import FILTERS, accepted
from web.pagekit import HOSTILE, PageClient, agent_client, element_tags, exchange, sign_in_link

PLAN = "projects/alpha/plan.md"
SESSIONS = itertools.count(1)  # each agent session writes its own text and its own new file


# ----------------------------------------------------------------------------- health
def test_health_shows_counts_freshness_embedding_and_missing_files(server: ServerThread) -> None:
    html = PageClient(server).get("/").text
    status = server.get_json("/status")[2]["data"]
    assert f'data-snapshot="{status["snapshotId"]}"' in html
    assert f'data-count="noteCount">{status["noteCount"]:,}<' in html
    assert 'class="badge fresh"' in html
    assert "Semantic search" in html and "notes embedded" in html
    assert "Why is my note missing?" in html


# ----------------------------------------------------------------------------- search
def test_search_shows_hits_with_escaped_highlighted_snippets(server: ServerThread) -> None:
    page = PageClient(server)
    html = page.get("/ui/search?q=lighthouse&mode=lexical").text
    assert "projects/alpha/hostile.md" in html
    assert "<mark>lighthouse</mark>" in html.lower()
    assert [
        t for t in element_tags(html) if t[0] in ("img", "script") and "src" in t[1] and t[1]["src"] == "x"
    ] == []
    assert HOSTILE not in html
    fragment = page.get("/ui/search?q=lighthouse&mode=lexical&part=results").text
    assert fragment.lstrip().startswith('<p class="meta">') and "<html" not in fragment
    bad = page.get("/ui/search?q=lighthouse&mode=sideways")
    assert bad.status == 400 and "INVALID_PARAMETER" in bad.text  # the operation's own validation


def test_search_filters_reach_the_operation(server: ServerThread) -> None:
    if not set(FILTERS) <= accepted(CATALOG.named("search")):
        pytest.skip("search does not take tags/folder/modified_after/modified_before yet; un-skip at merge")
    page = PageClient(server)
    html = page.get("/ui/search?q=lighthouse&tags=web&folder=projects&modified_after=2000-01-01").text
    for name in FILTERS:
        assert f'name="{name}"' in html
    hits = [t[1]["href"] for t in element_tags(html) if t[0] == "a" and "title" in (t[1].get("class") or "")]
    assert hits and all(h is not None and "hostile.md" in h for h in hits)  # the one note tagged `web`
    none = page.get("/ui/search?q=lighthouse&modified_before=2000-01-01&part=results").text
    assert "No hit." in none


def test_each_hits_explain_fields_are_shown(server: ServerThread) -> None:
    if "explain" not in accepted(CATALOG.named("search")):
        pytest.skip("search does not take explain yet; un-skip at merge")
    from vault_agent.web.render import flat_items

    body = server.get_json("/search?q=lighthouse&explain=true&mode=lexical")[2]
    html = PageClient(server).get("/ui/search?q=lighthouse&mode=lexical&part=results").text
    for key, _value in flat_items(body["data"]["results"][0]["explain"]):
        assert f"<dt>{key}</dt>" in html


def test_search_offers_only_the_inputs_the_operation_takes(server: ServerThread) -> None:
    html = PageClient(server).get("/ui/search?q=lighthouse&tags=web").text
    takes = accepted(CATALOG.named("search"))
    for name in FILTERS:
        assert (f'name="{name}"' in html) == (name in takes)
    assert "projects/alpha/hostile.md" in html  # an unknown filter is not sent, never an error


# ----------------------------------------------------------------------------- a note
def test_a_note_shows_its_outline_and_one_section_at_a_time(server: ServerThread) -> None:
    page = PageClient(server)
    outline = server.get_json("/note-outline?path=projects/alpha/sections.md")[2]
    first = next(h["id"] for h in outline["headings"] if h["text"] == "First part")
    html = page.get(f"/ui/note?path=projects/alpha/sections.md&section={first}").text
    for h in outline["headings"]:
        assert f'data-section="{h["id"]}"' in html
    assert "first body apples" in html and "deeper body pears" in html  # its subsection too
    assert "second body plums" not in html and "intro words" not in html
    # A search hit opens the section holding its first line.
    by_line = page.get("/ui/note?path=projects/alpha/sections.md&line=15&part=section").text
    assert "second body plums" in by_line and "apples" not in by_line
    assert "Section <em>First part</em> of <em>sections</em>" in html  # what is shown, in words
    # Without a section: a short note whole; a long one its text before the first heading.
    whole = page.get("/ui/note?path=projects/alpha/sections.md&part=section").text
    assert "intro words" in whole and "second body plums" in whole and "All of <em>sections</em>" in whole
    top = page.get("/ui/note?path=resources/manual.md&part=section").text
    assert "Intro of the manual" in top and "Paragraph 0" not in top
    assert "The top of <em>manual</em>, before its first heading" in top


def test_a_huge_section_is_read_one_page_at_a_time(server: ServerThread) -> None:
    page = PageClient(server)
    html = page.get("/ui/note?path=projects/alpha/long.md&line=2&part=section").text
    assert "line 0 of a long section" in html and "line 2999 of" not in html
    assert ">Read on</a>" in html and "(more below)" in html
    start = html.split("&amp;at=")[1].split("#")[0].split("&")[0]
    more = page.get(f"/ui/note?path=projects/alpha/long.md&section=h1-long-0001&at={start}&part=section").text
    assert f"line {int(start) - 3} of a long section" in more


def test_a_note_that_is_not_there_says_so(server: ServerThread) -> None:
    resp = PageClient(server).get("/ui/note?path=../../etc/passwd")
    assert resp.status == 400 and "INVALID_PATH" in resp.text
    missing = PageClient(server).get("/ui/note?path=nothing/here.md")
    assert missing.status == 404 and "NOT_FOUND" in missing.text


# ----------------------------------------------------------------------------- conversations
def _agent_session(server: ServerThread) -> tuple[str, str]:
    """A real SDK client over /mcp: a message, two writes (the plan rewritten, a new note);
    returns the conversation id and the new note's path."""
    n = next(SESSIONS)
    new = f"inbox/from-the-agent-{n}.md"

    async def go() -> str:
        async with agent_client(server.url, server.token) as c:
            await c.call_tool("send_message", {"text": "Filing an idea and rewriting the plan"})
            await c.call_tool(
                "vault_write",
                {"path": PLAN, "content": f"# Plan\n\n{CANARY} rewritten {n}\n", "mode": "overwrite"},
            )
            await c.call_tool("vault_create", {"path": new, "content": "# Idea\n\nfrom the agent\n"})
            listed = await c.call_tool("get_conversation", {"limit": 1})
            return str(listed.structured_content["data"]["conversations"][0]["id"])

    return asyncio.run(go()), new


def test_a_conversation_shows_messages_calls_and_writes_with_diffs(
    server: ServerThread, settings: Settings
) -> None:
    cid, new = _agent_session(server)
    page = PageClient(server)
    listing = page.get("/ui/conversations").text
    assert f'href="/ui/conversations/{cid}"' in listing
    html = page.get(f"/ui/conversations/{cid}").text
    assert "Filing an idea and rewriting the plan" in html
    assert "vault_write" in html and "vault_create" in html
    assert html.count('<pre class="diff">') == 2
    assert f"+{CANARY} rewritten" in html  # the after side of the plan's write
    assert "+# Idea" in html
    # Undo: the dry run first, then the confirmed undo.
    dry = page.get(f"/ui/conversations/{cid}/undo").text
    assert "Undo 2 file(s)" in dry and f"-{CANARY} rewritten" in dry
    assert read_bytes(settings, new) is not None  # a dry run changes nothing
    unconfirmed = page.post(f"/ui/conversations/{cid}/undo", {})
    assert unconfirmed.status == 400 and read_bytes(settings, new) is not None
    done = page.post(f"/ui/conversations/{cid}/undo", {"confirm": "yes"})
    assert done.status == 200 and "Undone: 2 file(s)" in done.text
    assert read_bytes(settings, new) is None and CANARY.encode() not in (read_bytes(settings, PLAN) or b"")
    again = page.get(f"/ui/conversations/{cid}/undo").text
    assert "Nothing to undo" in again


def test_undo_refuses_a_note_changed_after_the_agent_and_offers_the_merge(
    server: ServerThread, settings: Settings
) -> None:
    cid, new = _agent_session(server)
    plan = Path(settings.vault) / PLAN
    plan.write_text(plan.read_text(encoding="utf-8") + "\nmy own line\n", encoding="utf-8")
    page = PageClient(server)
    dry = page.get(f"/ui/conversations/{cid}/undo").text
    assert "changed by someone else after the agent last wrote it" in dry
    assert 'class="danger"' not in dry  # no confirm button while a file is a conflict
    assert f'href="/ui/conversations/{cid}/undo?merge=1"' in dry  # the merge would work: offered
    forced = page.post(f"/ui/conversations/{cid}/undo", {"confirm": "yes"})
    assert forced.status == 409 and "nothing was undone" in forced.text
    assert read_bytes(settings, new) is not None
    merged = page.get(f"/ui/conversations/{cid}/undo?merge=1").text
    assert "kept the edits made by someone else" in merged and 'name="merge" value="1"' in merged
    done = page.post(f"/ui/conversations/{cid}/undo", {"confirm": "yes", "merge": "1"})
    assert done.status == 200, done.text
    assert plan.read_text(encoding="utf-8").rstrip().endswith("my own line")
    assert CANARY not in plan.read_text(encoding="utf-8")


def test_a_question_is_answered_from_the_page(server: ServerThread) -> None:
    """A client without elicitation asks; the page lists the question and its reply reaches
    the waiting send_message through the reply channel."""
    result: dict[str, Any] = {}

    async def ask() -> None:
        async with agent_client(server.url, server.token) as c:
            answer = await c.call_tool("send_message", {"text": "Which folder?", "expect_reply": True})
            result.update(answer.structured_content["data"])

    thread = threading.Thread(target=lambda: asyncio.run(ask()), daemon=True)
    thread.start()
    page = PageClient(server)
    wait_until(
        lambda: "Which folder?" in page.get("/ui/conversations?part=questions").text, what="the question"
    )
    html = page.get("/ui/conversations?part=questions").text
    cid = html.split('action="/ui/conversations/')[1].split("/reply")[0]
    seq = html.split('name="seq" value="')[1].split('"')[0]
    sent = page.post(f"/ui/conversations/{cid}/reply", {"text": "Put it in inbox/", "seq": seq})
    assert (sent.status, sent.headers["location"]) == (303, f"/ui/conversations/{cid}?done=replied")
    thread.join(60)
    assert (result["reply"], result["reply_via"], result["reason"]) == ("Put it in inbox/", "http", None)
    late = page.post(f"/ui/conversations/{cid}/reply", {"text": "again", "seq": seq})
    assert late.status == 409 and "not waiting" in late.text


def test_ending_a_conversation_from_the_page(server: ServerThread) -> None:
    cid, new = _agent_session(server)
    page = PageClient(server)
    assert "End this conversation" in page.get(f"/ui/conversations/{cid}").text
    ended = page.post(f"/ui/conversations/{cid}/end", {})
    assert ended.status == 303
    html = page.get(f"/ui/conversations/{cid}?done=ended").text
    assert "The conversation is ended." in html and "End this conversation" not in html
    assert server.get_json(f"/conversations/{cid}")[2]["data"]["conversation"]["end_reason"] == "user"


def test_the_listing_pages_newest_first(server: ServerThread) -> None:
    for _ in range(3):
        _agent_session(server)
    listed = server.get_json("/conversations?limit=2")[2]["data"]
    older = server.get_json(f"/conversations?limit=2&cursor={listed['next_cursor']}")[2]["data"]
    ids = [c["id"] for c in listed["conversations"] + older["conversations"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 4
    html = PageClient(server).get("/ui/conversations").text
    assert html.count('<li class="conversation') == min(20, listed["total"])


# ----------------------------------------------------------------------------- the live stream
class PageStream:
    """`GET /ui/events` read in a thread, as the page's EventSource reads it."""

    def __init__(self, page: PageClient) -> None:
        import http.client

        self.events: list[dict[str, Any]] = []
        self.conn = http.client.HTTPConnection("127.0.0.1", page.server.port, timeout=60)
        self.conn.request("GET", "/ui/events", headers={"Cookie": page.cookie})
        self.sock = self.conn.sock  # kept: getresponse may drop the connection's reference
        self.resp = self.conn.getresponse()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for raw in self.resp:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("data: "):
                    self.events.append(json.loads(line[6:]))
        except (OSError, ValueError, AttributeError):
            return

    def close(self) -> None:
        # Closing alone leaves the reader thread blocked until the server's next event;
        # shutting the socket down ends its read at once.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()
        self.thread.join(30)
        assert not self.thread.is_alive()


def test_the_live_stream_carries_status_and_messages(server: ServerThread) -> None:
    page = PageClient(server)
    stream = PageStream(page)
    try:
        assert stream.resp.status == 200
        wait_until(lambda: any(e["type"] == "status" for e in stream.events), what="the first status event")
        first = next(e for e in stream.events if e["type"] == "status")
        assert first["indexFreshness"] == "fresh" and first["noteCount"] > 0
        cid, new = _agent_session(server)
        wait_until(
            lambda: any(
                e.get("text") == "Filing an idea and rewriting the plan" and e["conversation_id"] == cid
                for e in stream.events
            ),
            what="the agent's message",
        )
    finally:
        stream.close()


def test_the_page_logs_no_note_text_no_query_and_no_token(server: ServerThread, logs: LogCapture) -> None:
    page = PageClient(server)
    page.get(f"/ui/search?q={CANARY}")
    page.get("/ui/note?path=projects/alpha/hostile.md")
    page.get("/ui/search?q=zzqueryword")
    page.get(f"/?token={server.token}")  # an old address: refused, and never logged
    link = sign_in_link(server)
    exchange(server, "GET", link)
    # The server's lines (this module's earlier tests included); the test's own MCP client
    # logs its requests at DEBUG, which is not the server's log.
    server_side = [
        ln
        for ln in logs.lines
        if json.loads(ln)["logger"].startswith(("vault_agent", "aiohttp", "mcp.server"))
    ]
    text = "\n".join(server_side)
    assert (
        len(server_side) > 20
        and CANARY not in text
        and "zzqueryword" not in text
        and server.token not in text
        and link.split("once=")[1] not in text
    )
    routes = {r["route"] for r in logs.requests()}
    assert {"/", "/ui/search", "/ui/note"} <= routes
    assert not [r for r in logs.requests() if "?" in r["route"]]


def test_no_request_of_the_page_holds_the_writer(server: ServerThread, settings: Settings) -> None:
    """The index writer can run while every view and the live stream are open."""
    from vault_agent.indexer.build import build_index
    from vault_agent.indexer.lock import writer_lock_held

    page = PageClient(server)
    stream = PageStream(page)
    try:
        for path in [
            "/",
            "/ui/search?q=plan",
            "/ui/note?path=projects/alpha/sections.md",
            "/ui/conversations",
        ]:
            assert page.get(path).status == 200
            assert not writer_lock_held(settings.index_dir)
        (Path(settings.vault) / "inbox" / "while-open.md").write_text("# While open\n", encoding="utf-8")
        build_index(settings)  # takes the writer lock: free, with the page's stream open
        wait_until(
            lambda: any(e["type"] == "status" and e.get("noteCount", 0) > 0 for e in stream.events),
            what="status",
        )
    finally:
        stream.close()
    assert exchange(server, "GET", "/").status == 401


def test_undo_over_the_api_is_the_persons_and_needs_no_allow_writes(
    server: ServerThread, settings: Settings
) -> None:
    """POST /conversations/{id}/undo (bearer token): a dry run, then the undo, on a server
    whose agent write tools are off; never an MCP tool."""
    from dataclasses import replace

    from api.serverkit import serving

    cid, new = _agent_session(server)
    with serving(replace(settings, writes_enabled=False)) as locked:
        body = json.dumps({}).encode()
        status, _, text = locked.request("POST", f"/conversations/{cid}/undo", body=body)
        dry = json.loads(text)["data"]
        assert (
            status == 200 and dry["dry_run"] and [f["status"] for f in dry["files"]] == ["planned", "planned"]
        )
        status, _, text = locked.request(
            "POST", "/conversations/undo", body=json.dumps({"id": cid, "apply": True}).encode()
        )
        assert status == 200 and [f["status"] for f in json.loads(text)["data"]["files"]] == ["done", "done"]
        refused = locked.request(
            "POST", "/files/write", body=json.dumps({"path": PLAN, "content": "x"}).encode()
        )
        assert refused[0] == 403  # the agent's write tools stay off
    assert read_bytes(settings, new) is None

    async def tools() -> list[str]:
        async with agent_client(server.url, server.token) as c:
            return [t.name for t in (await c.list_tools()).tools]

    assert "conversation_undo" not in asyncio.run(tools())
