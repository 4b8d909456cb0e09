"""A whole agent session through the real SDK client, over Streamable HTTP and stdio:
messages (notifications + SSE), a question answered by elicitation, two writes, an end
with a summary, the record through every surface, and undo restoring the notes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from api.serverkit import ServerThread
from testkit import check_golden, wait_until

from conversations.kit import CANARY, Answerer, Inbox, SseReader, cli, http_client, read_bytes, stdio_client
from vault_agent.config import Settings

PLAN = "projects/alpha/plan.md"
NEW = "inbox/new-idea.md"
QUESTION = "Shall I rewrite the plan's introduction?"
GOLDEN = Path(__file__).parent / "golden"
ENTRY_TYPES = ["message", "call", "message", "reply", "call", "call", "write", "call", "write", "call", "end"]


async def _session(client_cm: Any) -> dict[str, Any]:
    async with client_cm as c:
        out: dict[str, Any] = {}
        out["first"] = await c.call_tool("send_message", {"text": "Starting on the alpha plan"})
        out["ask"] = await c.call_tool(
            "send_message", {"text": QUESTION, "expect_reply": True, "priority": "high"}
        )
        await c.call_tool("vault_stat", {"path": PLAN})
        await c.call_tool(
            "vault_write", {"path": PLAN, "content": f"# Plan\n\n{CANARY} rewritten\n", "mode": "overwrite"}
        )
        await c.call_tool("vault_create", {"path": NEW, "content": f"# Idea\n\n{CANARY}\n"})
        out["end"] = await c.call_tool(
            "end_conversation",
            {"title": "Tidied the alpha plan", "summary": "Rewrote the plan, filed one idea."},
        )
        out["list"] = await c.call_tool("get_conversation", {})
        cid = out["end"].structured_content["data"]["conversation"]["id"]
        out["page"] = await c.call_tool("get_conversation", {"id": cid, "limit": 3})
        out["all"] = await c.call_tool("get_conversation", {"id": cid})
        return out


def _check_session(settings: Settings, out: dict[str, Any], inbox: Inbox, client: str) -> str:
    assert [out[k].is_error for k in out] == [False] * len(out)
    ask = out["ask"].structured_content["data"]
    assert (ask["reply"], ask["reason"], ask["message_seq"]) == ("yes, go ahead", None, 2)
    assert inbox.questions == [QUESTION]
    assert inbox.messages() == ["Starting on the alpha plan", QUESTION]
    row = out["end"].structured_content["data"]["conversation"]
    cid = row["id"]
    assert {k: row[k] for k in ("client", "status", "end_reason", "title", "summary", "summary_source")} == {
        "client": client,
        "status": "ended",
        "end_reason": "agent",
        "title": "Tidied the alpha plan",
        "summary": "Rewrote the plan, filed one idea.",
        "summary_source": "agent",
    }
    assert (row["messages"], row["replies"], row["tool_calls"], row["writes"]) == (2, 1, 5, 2)
    listed = out["list"].structured_content["data"]
    assert listed["conversations"][0] == row and listed["truncated"] is False
    entries = out["all"].structured_content["data"]["entries"]
    assert [e["type"] for e in entries] == ENTRY_TYPES
    page = out["page"].structured_content["data"]
    assert (page["entries"], page["next_cursor"]) == (entries[:3], "3")
    writes = [e for e in entries if e["type"] == "write"]
    assert [(w["tool"], w["path"], w["old"], w["before_sha"] is None) for w in writes] == [
        ("vault_write", PLAN, "backup", False),
        ("vault_create", NEW, "none", True),
    ]
    calls = [(e["tool"], e["paths"], e["outcome"]) for e in entries if e["type"] == "call"]
    assert calls[2:] == [
        ("vault_stat", [PLAN], "OK"),
        ("vault_write", [PLAN], "OK"),
        ("vault_create", [NEW], "OK"),
    ]
    records = Path(settings.index_dir) / "conversations"
    for rec in records.glob("*.rec"):
        assert CANARY.encode() not in rec.read_bytes()  # never note text
    return str(cid)


def _check_undo(settings: Settings, cid: str, original_plan: bytes) -> None:
    code, dry, _ = cli(settings, "conversations", "undo", cid)
    assert code == 0
    # The whole dry-run payload (diffs included) is golden; only the id varies per run.
    check_golden(GOLDEN / "undo-dry-run.json", json.dumps(dry, indent=2).replace(cid, "CID") + "\n")
    assert read_bytes(settings, NEW) is not None  # a dry run changes nothing
    code, done, err = cli(settings, "conversations", "undo", cid, "--apply")
    assert code == 0, err
    assert [(f["status"], f["diff"]) for f in done["data"]["files"]] == [("done", None), ("done", None)]
    assert read_bytes(settings, PLAN) == original_plan
    assert read_bytes(settings, NEW) is None
    code, again, _ = cli(settings, "conversations", "undo", cid, "--apply")
    assert code == 0  # already undone: said so, nothing changed, nothing to refuse
    assert [(f["status"], f["reason"][:9]) for f in again["data"]["files"]] == [("undone", "undone at")] * 2
    record = cli(settings, "conversations", "show", cid)[1]["data"]["entries"]
    undo = [e for e in record if e["type"] == "undo"]
    assert [(u["outcome"], [f["state"] for f in u["files"]]) for u in undo] == [("done", ["restored"] * 2)]


def test_http_session_recorded_delivered_and_undone(server: ServerThread, settings: Settings) -> None:
    original = read_bytes(settings, PLAN)
    assert original is not None
    reader = SseReader(server.port, server.token)
    assert reader.status == 200
    assert reader.connected.wait(30)
    inbox = Inbox()
    out = asyncio.run(_session(http_client(server.url, server.token, inbox)))
    cid = _check_session(settings, out, inbox, "mcp")
    wait_until(lambda: len(reader.events) >= 3, what="three SSE events")
    assert [(e["type"], e.get("text"), e.get("reply"), e["conversation_id"]) for e in reader.events] == [
        ("message", "Starting on the alpha plan", None, cid),
        ("message", QUESTION, None, cid),
        ("reply", None, "yes, go ahead", cid),
    ]
    # The same record on HTTP (by id), the generated CLI twin and the local CLI.
    status, _, body = server.get_json(f"/conversations/{cid}?limit=3")
    assert (status, body) == (200, out["page"].structured_content)
    code, shown, _ = cli(settings, "conversations", "show", cid, "--limit", "3")
    assert (code, shown) == (0, body)
    code, listed, _ = cli(settings, "conversations", "list")
    # The calls after end_conversation opened the session's next conversation.
    assert [r["id"] for r in listed["data"]["conversations"]][1] == cid
    _check_undo(settings, cid, original)
    reader.close()


def test_sse_stream_needs_the_token_and_http_messages_reach_it(server: ServerThread) -> None:
    status, _, body = server.request("GET", "/messages/stream", token=False)
    assert (status, json.loads(body)["error"]["code"]) == (401, "UNAUTHORIZED")
    reader = SseReader(server.port, server.token)
    assert reader.connected.wait(30)
    status, _, text = server.request("POST", "/messages", body=json.dumps({"text": "from a script"}).encode())
    sent = json.loads(text)["data"]
    assert (status, sent["delivered_to"], sent["reply"]) == (200, 1, None)
    wait_until(lambda: len(reader.events) == 1, what="the SSE event")
    assert reader.events[0]["text"] == "from a script"

    # HTTP has no form to show: the question waits on the reply channel, the stream shows it
    # live, and the person answers over HTTP (the web page's way) with the id in the path.
    def answer(question: dict[str, Any]) -> None:
        cid, seq = question["conversation_id"], question["message_seq"]
        reply = json.dumps({"text": "go", "seq": seq}).encode()
        status, _, text = server.request("POST", f"/conversations/{cid}/reply", body=reply)
        assert (status, json.loads(text)["data"]) == (
            200,
            {"conversation_id": cid, "message_seq": seq, "delivered": True},
        )

    person = Answerer(lambda: server.get_json("/conversations/questions")[2]["data"]["questions"], answer)
    status, _, text = server.request(
        "POST", "/messages", body=json.dumps({"text": "question?", "expectReply": True}).encode()
    )
    (question,) = person.join()
    times = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    listed = times.sub("<time>", json.dumps({"questions": [question]}, indent=2))
    check_golden(GOLDEN / "open-questions.json", listed.replace(question["conversation_id"], "CID") + "\n")
    sent = json.loads(text)["data"]
    assert {k: sent[k] for k in ("reply", "reason", "reply_via")} == {
        "reply": "go",
        "reason": None,
        "reply_via": "http",
    }
    cid = question["conversation_id"]
    _, _, by_id = server.get_json(f"/conversations/{cid}/questions")
    assert by_id == {"data": {"questions": []}, "warnings": []}  # answered: nothing waits any more
    wait_until(lambda: len(reader.events) == 4, what="the question's SSE events")
    kinds = [(e["type"], e.get("text"), e.get("reply"), e.get("via")) for e in reader.events[1:]]
    assert kinds == [
        ("message", "question?", None, None),
        ("question", "question?", None, None),
        ("reply", None, "go", "http"),
    ]
    assert reader.events[2]["answer_with"] == f"vault-agent conversations reply {cid} TEXT"
    status, _, text = server.request("POST", f"/conversations/{cid}/reply", body=b'{"text": "again"}')
    assert (status, json.loads(text)["error"]["code"]) == (409, "CONFLICT")  # nothing waits: said so
    reader.close()


def test_stdio_session_recorded_and_undone(settings: Settings) -> None:
    original = read_bytes(settings, PLAN)
    assert original is not None
    inbox = Inbox()
    out = asyncio.run(_session(stdio_client(settings, inbox, "--no-watch", "--allow-writes")))
    cid = _check_session(settings, out, inbox, "mcp")
    _check_undo(settings, cid, original)


def test_two_sessions_at_once_are_two_conversations(server: ServerThread) -> None:
    async def one(text: str, started: asyncio.Event, other: asyncio.Event) -> str:
        async with http_client(server.url, server.token, Inbox()) as c:
            await c.call_tool("send_message", {"text": text})
            started.set()
            await other.wait()  # both sessions are open at the same time
            await c.call_tool("send_message", {"text": text + " again"})
            end = await c.call_tool("end_conversation", {"title": text, "summary": text})
            return str(end.structured_content["data"]["conversation"]["id"])

    async def both() -> list[str]:
        a, b = asyncio.Event(), asyncio.Event()
        return list(await asyncio.gather(one("alpha", a, b), one("beta", b, a)))

    ids = asyncio.run(both())
    assert ids[0] != ids[1]
    for cid, text in zip(ids, ("alpha", "beta"), strict=True):
        _, _, body = server.get_json(f"/conversations/{cid}")
        texts = [e["text"] for e in body["data"]["entries"] if e["type"] == "message"]
        assert texts == [text, text + " again"]


def test_stateless_revision_groups_by_client_or_named_conversation(server: ServerThread) -> None:
    inbox = Inbox()
    # The question waits on the reply channel; the person answers from the CLI, another
    # process, which the server's waiting call sees through the record.
    person = Answerer(
        lambda: server.get_json("/conversations/questions")[2]["data"]["questions"],
        lambda q: cli(server.ctx.settings, "conversations", "reply", q["conversation_id"], "from the cli"),
    )

    async def go() -> list[Any]:
        async with http_client(server.url, server.token, inbox, mode="auto") as c:
            assert c.session.protocol_version == "2026-07-28"
            return [
                await c.call_tool("send_message", {"text": "one"}),
                await c.call_tool("send_message", {"text": "ok?", "expect_reply": True}),
                await c.call_tool(
                    "send_message", {"text": "named"}, meta={"vault-agent/conversation": "job-7"}
                ),
                await c.call_tool(
                    "send_message", {"text": "named again"}, meta={"vault-agent/conversation": "job-7"}
                ),
            ]

    one, ask, named, again = [r.structured_content["data"] for r in asyncio.run(go())]
    assert (
        one["conversation_id"]
        == ask["conversation_id"]
        != named["conversation_id"]
        == again["conversation_id"]
    )
    person.join()
    assert (ask["reply"], ask["reason"], ask["reply_via"]) == ("from the cli", None, "cli")  # no elicitation
    assert inbox.messages() == ["one", "ok?", "named", "named again"]
