"""Boundaries and bad input with the real SDK client in process: idle timeout (injected
clock), the user's end, retention, clients without elicitation or sampling, declined and
unanswered questions, caps, unknown ids, privacy of records and logs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from api.serverkit import make_context
from mcp import Client

from conversations.kit import CANARY, Answerer, Inbox, cli
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.conversations.replies import open_questions, reply_to_question
from vault_agent.conversations.store import ConversationStore
from vault_agent.errors import Conflict
from vault_agent.server.context import close_context


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ctx_factory(clock: FakeClock) -> Iterator[Any]:
    made: list[AppContext] = []

    def make(settings: Settings, **update: Any) -> AppContext:
        ctx = make_context(dataclasses.replace(settings, **update) if update else settings)
        ctx.conversation_clock = clock
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        close_context(ctx)


def _data(result: Any) -> Any:
    assert result.is_error is False, result.content[0].text
    return result.structured_content["data"]


def _error(result: Any) -> Any:
    assert result.is_error is True
    return result.structured_content["error"]


async def _calls(
    server: Any,
    calls: list[tuple[str, dict[str, Any]]],
    clock: FakeClock | None = None,
    steps: list[float] | None = None,
    **client_kwargs: Any,
) -> list[Any]:
    out = []
    async with Client(server, mode="legacy", **client_kwargs) as c:
        for i, (name, args) in enumerate(calls):
            if clock is not None and steps is not None:
                clock.now += steps[i]
            out.append(await c.call_tool(name, args))
    return out


def test_idle_timeout_starts_a_new_conversation(
    settings: Settings, ctx_factory: Any, clock: FakeClock
) -> None:
    ctx = ctx_factory(settings)
    calls = [("send_message", {"text": t}) for t in ("one", "two", "three")]
    results = asyncio.run(_calls(build_mcp_server(ctx, CATALOG), calls, clock, [0, 29 * 60, 31 * 60]))
    ids = [_data(r)["conversation_id"] for r in results]
    assert ids[0] == ids[1] != ids[2]
    old = _data(
        asyncio.run(_calls(build_mcp_server(ctx, CATALOG), [("get_conversation", {"id": ids[0]})]))[0]
    )
    row = old["conversation"]
    assert (row["status"], row["end_reason"], row["summary_source"], row["messages"]) == (
        "ended",
        "idle",
        "digest",
        2,
    )
    assert row["title"] == "2 tool calls, 2 messages"
    assert (row["started_at"], row["ended_at"]) == (
        "2030-03-17T17:46:40Z",
        "2030-03-17T18:45:40Z",
    )  # last call + 30 min


def test_user_end_is_noticed_by_the_running_session(settings: Settings, ctx_factory: Any) -> None:
    ctx = ctx_factory(settings)
    server = build_mcp_server(ctx, CATALOG)

    async def go() -> list[str]:
        async with Client(server, mode="legacy") as c:
            first = _data(await c.call_tool("send_message", {"text": "before"}))["conversation_id"]
            code, body, _ = await anyio.to_thread.run_sync(cli, settings, "conversations", "end", first)
            assert code == 0 and body["data"]["conversation"]["end_reason"] == "user"
            second = _data(await c.call_tool("send_message", {"text": "after"}))["conversation_id"]
            return [first, second]

    first, second = asyncio.run(go())
    assert first != second
    code, body, _ = cli(settings, "conversations", "end", "c20300101T000000000Z-abcdef")
    assert (code, body["error"]["code"]) == (4, "NOT_FOUND")


def test_retention_drops_the_oldest(settings: Settings, ctx_factory: Any, clock: FakeClock) -> None:
    ctx = ctx_factory(settings, conversations_retention=3)
    calls = []
    for i in range(5):
        calls += [
            ("send_message", {"text": f"m{i}"}),
            ("end_conversation", {"title": f"t{i}", "summary": "s"}),
        ]
    results = asyncio.run(_calls(build_mcp_server(ctx, CATALOG), calls, clock, [1.0] * len(calls)))
    ids = [_data(r)["conversation_id"] for r in results[::2]]
    assert ConversationStore(settings.index_dir).ids() == ids[2:]
    listed = _data(
        asyncio.run(_calls(build_mcp_server(ctx, CATALOG), [("get_conversation", {"limit": 10})]))[0]
    )
    # The listing call itself opened a new conversation after the list was taken: retention 3.
    assert [r["title"] for r in listed["conversations"]] == ["t4", "t3", "t2"]
    assert ConversationStore(settings.index_dir).ids()[:2] == ids[3:]


def test_client_without_elicitation_or_sampling(settings: Settings, ctx_factory: Any) -> None:
    """No form in the client: the question waits on the reply channel and the person's
    reply (the core function behind HTTP and the CLI) comes back as the tool's answer."""
    ctx = ctx_factory(settings)
    inbox = Inbox()
    person = Answerer(
        lambda: [q.model_dump() for q in open_questions(ctx, None).data.questions],
        lambda q: reply_to_question(ctx, q["conversation_id"], "yes, from the terminal", None, "cli"),
    )
    calls = [("send_message", {"text": "ok?", "expect_reply": True}), ("end_conversation", {})]
    ask, end = asyncio.run(_calls(build_mcp_server(ctx, CATALOG), calls, logging_callback=inbox.on_log))
    (question,) = person.join()
    assert {k: question[k] for k in ("message_seq", "client", "text")} == {
        "message_seq": 1,
        "client": "mcp",
        "text": "ok?",
    }
    assert question["answer_with"] == f"vault-agent conversations reply {question['conversation_id']} TEXT"
    assert {k: _data(ask)[k] for k in ("reply", "reason", "reply_via", "note")} == {
        "reply": "yes, from the terminal",
        "reason": None,
        "reply_via": "cli",
        "note": None,
    }
    told = [n.data for n in inbox.notifications if n.logger == "vault-agent.questions"]
    assert [(t["type"], t["text"], t["answer_with"]) for t in told] == [
        ("question", "ok?", question["answer_with"])
    ]
    assert open_questions(ctx, None).data.questions == []  # answered: no longer open
    row = _data(end)["conversation"]
    assert (row["summary_source"], row["replies"]) == ("digest", 1)
    assert row["summary"] == "1 tool calls, 0 writes, 1 messages to the user. First message: ok?"


def test_unanswered_question_without_a_form_tells_the_agent_what_to_do(
    settings: Settings, ctx_factory: Any
) -> None:
    ctx = ctx_factory(settings, conversations_reply_timeout_seconds=1)
    (ask,) = asyncio.run(
        _calls(build_mcp_server(ctx, CATALOG), [("send_message", {"text": "q?", "expect_reply": True})])
    )
    data = _data(ask)
    assert (data["reply"], data["reason"], data["reply_via"]) == (None, "timeout", None)
    assert data["note"] == (
        "nobody answered within 1 seconds (the client cannot show questions, so the person was asked to run "
        f"'vault-agent conversations reply {data['conversation_id']} TEXT' or use the web page); ask the "
        "question in your own reply to the user instead"
    )
    with pytest.raises(Conflict) as late:  # the question closed: a late reply is refused, not lost silently
        reply_to_question(ctx, data["conversation_id"], "too late", None, "cli")
    assert late.value.message.startswith("no question of that conversation is waiting for a reply")


def test_sampling_writes_title_and_summary(settings: Settings, ctx_factory: Any) -> None:
    prompts: list[str] = []

    async def sample(_context: Any, params: Any) -> types.CreateMessageResult:
        prompts.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Title: Plan tidy\nSummary: Tidied it."),
            model="test-model",
        )

    ctx = ctx_factory(settings)
    calls = [("vault_stat", {"path": "projects/alpha/plan.md"}), ("end_conversation", {})]
    _, end = asyncio.run(_calls(build_mcp_server(ctx, CATALOG), calls, sampling_callback=sample))
    row = _data(end)["conversation"]
    assert (row["title"], row["summary"], row["summary_source"]) == ("Plan tidy", "Tidied it.", "sampling")
    assert "projects/alpha/plan.md" in prompts[0] and CANARY not in prompts[0]


def test_declined_and_unanswered_questions(settings: Settings, ctx_factory: Any) -> None:
    ctx = ctx_factory(settings, conversations_reply_timeout_seconds=1)
    declined = Inbox(answer=None)
    (result,) = asyncio.run(
        _calls(
            build_mcp_server(ctx, CATALOG),
            [("send_message", {"text": "q?", "expect_reply": True})],
            elicitation_callback=declined.on_elicit,
        )
    )
    assert (_data(result)["reply"], _data(result)["reason"]) == (None, "declined")

    async def never(_context: Any, _params: Any) -> types.ElicitResult:
        await anyio.Event().wait()  # the user never answers
        raise AssertionError("unreachable")

    (result,) = asyncio.run(
        _calls(
            build_mcp_server(ctx, CATALOG),
            [("send_message", {"text": "q?", "expect_reply": True})],
            elicitation_callback=never,
        )
    )
    assert (_data(result)["reply"], _data(result)["reason"]) == (None, "timeout")


def test_bad_input(settings: Settings, ctx_factory: Any) -> None:
    ctx = ctx_factory(settings)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("send_message", {"text": "   "}),
        ("send_message", {"text": "x" * 4001}),
        ("send_message", {"text": "x" * 4000}),
        ("get_conversation", {"id": "c20300101T000000000Z-abcdef"}),
        ("get_conversation", {"id": "../../etc/passwd"}),
        ("get_conversation", {"limit": 101}),
        ("get_conversation", {"cursor": "x"}),
        ("end_conversation", {"title": "t" * 201}),
    ]
    results = asyncio.run(_calls(build_mcp_server(ctx, CATALOG), calls))
    codes = [r.structured_content["error"]["code"] if r.is_error else "OK" for r in results]
    assert codes == [
        "INVALID_PARAMETER",
        "TOO_LARGE",
        "OK",
        "NOT_FOUND",
        "NOT_FOUND",
        "INVALID_PARAMETER",
        "INVALID_PARAMETER",
        "TOO_LARGE",
    ]
    assert _error(results[1])["message"] == (
        "parameter 'text' must be at most 4,000 characters; shorten it or split it into several"
    )


def test_records_and_logs_keep_no_note_text_or_queries(
    settings: Settings, ctx_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "private words in a message"
    calls = [
        ("vault_search", {"query": CANARY}),
        ("send_message", {"text": secret}),
        ("vault_create", {"path": "a/canary.md", "content": CANARY}),
        ("end_conversation", {"title": "t", "summary": "s"}),
    ]
    asyncio.run(_calls(build_mcp_server(ctx_factory(settings), CATALOG), calls))
    store = ConversationStore(settings.index_dir)
    raw = b"".join(p.read_bytes() for p in store.dir.glob("*.rec"))
    assert CANARY.encode() not in raw and secret.encode() in raw  # messages are kept, queries are not
    assert all(secret not in rec.getMessage() and CANARY not in rec.getMessage() for rec in caplog.records)
    other = dataclasses.replace(settings, index_dir=settings.index_dir.parent / "state2")
    asyncio.run(
        _calls(
            build_mcp_server(ctx_factory(other, conversations_record_queries=True), CATALOG),
            [("vault_search", {"query": CANARY})],
        )
    )
    raw2 = b"".join(p.read_bytes() for p in ConversationStore(other.index_dir).dir.glob("*.rec"))
    assert CANARY.encode() in raw2  # only when the user turned it on


def test_records_are_protected_from_file_tools(settings: Settings, ctx_factory: Any) -> None:
    asyncio.run(_calls(build_mcp_server(ctx_factory(settings), CATALOG), [("send_message", {"text": "hi"})]))
    inside = dataclasses.replace(settings, index_dir=settings.vault / "state")
    asyncio.run(_calls(build_mcp_server(ctx_factory(inside), CATALOG), [("send_message", {"text": "hi"})]))
    rec = ConversationStore(inside.index_dir).ids()[0]
    calls = [
        ("vault_stat", {"path": ".vault-agent/conversations"}),
        ("vault_stat", {"path": f"state/conversations/{rec}.rec"}),
        ("vault_write", {"path": f"state/conversations/{rec}.rec", "content": "x", "mode": "overwrite"}),
        ("vault_ls", {"relative_dir": "state/conversations"}),
    ]
    results = asyncio.run(_calls(build_mcp_server(ctx_factory(inside), CATALOG), calls))
    assert [_error(r)["code"] for r in results] == ["FORBIDDEN"] * 4


def test_undo_restores_deletes_and_repeated_edits_and_lists_moves(
    settings: Settings, ctx_factory: Any
) -> None:
    from conversations.kit import read_bytes
    from vault_agent.conversations.undo import undo_conversation

    plan, tasks = "projects/alpha/plan.md", "projects/alpha/tasks.md"
    ctx = ctx_factory(settings)
    (settings.vault / tasks).write_bytes(b"# Tasks\r\n\r\n- one\xc2\xa0two\r\n")  # exact bytes matter
    originals = {p: read_bytes(settings, p) for p in (plan, tasks)}
    calls = [
        ("vault_write", {"path": plan, "content": "v1\n", "mode": "overwrite"}),
        ("vault_write", {"path": plan, "content": "v2\n", "mode": "append"}),
        ("vault_delete", {"path": tasks}),
        ("vault_create", {"path": "tmp/x.md", "content": "x"}),
        ("vault_move", {"source": "tmp/x.md", "destination": "tmp/y.md"}),
        ("end_conversation", {"title": "t", "summary": "s"}),
    ]
    results = asyncio.run(_calls(build_mcp_server(ctx, CATALOG), calls))
    cid = _data(results[-1])["conversation"]["id"]
    entries = _data(
        asyncio.run(_calls(build_mcp_server(ctx, CATALOG), [("get_conversation", {"id": cid})]))[0]
    )["entries"]
    deleted = next(e for e in entries if e["type"] == "write" and e["tool"] == "vault_delete")
    assert (deleted["after_sha"], deleted["old"], deleted["trashed_to"]) == (
        None,
        "backup",
        ".trash/tasks.md",
    )
    plan_undo = undo_conversation(ctx, cid, apply=False).data
    assert [(f.path, f.action, f.status) for f in plan_undo.files] == [
        (plan, "restore", "planned"),
        (tasks, "restore", "planned"),
        ("tmp/x.md", "remove", "conflict"),
    ]  # tmp/x.md was moved away after it was written: it no longer holds the agent's bytes
    assert plan_undo.not_undoable == ["vault_move tmp/x.md -> tmp/y.md"]

    with pytest.raises(Conflict) as caught:
        undo_conversation(ctx, cid, apply=True)
    assert caught.value.message.startswith(
        "1 file(s) cannot be undone, so nothing was undone (tmp/x.md: it no longer"
    )
    assert read_bytes(settings, plan) != originals[plan]  # nothing half done
    (settings.vault / "tmp/y.md").rename(settings.vault / "tmp/x.md")  # the user reverts the move
    done = undo_conversation(ctx, cid, apply=True).data
    assert [f.status for f in done.files] == ["done"] * 3
    assert {p: read_bytes(settings, p) for p in (plan, tasks)} == originals
    assert read_bytes(settings, "tmp/x.md") is None


def test_http_questions_wait_two_at_a_time_and_several_need_seq(settings: Settings, ctx_factory: Any) -> None:
    """Questions of plain HTTP callers wait in the server's few request threads: a third
    one answers at once instead; with two waiting, a reply must say which (seq)."""
    import threading

    from testkit import wait_until

    from vault_agent.conversations.tools import send_message
    from vault_agent.errors import InvalidParameter

    ctx = ctx_factory(settings)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda t=t: results.append(send_message(ctx, t, "normal", True).data))
        for t in ("first?", "second?")
    ]

    def open_count_is(n: int) -> Callable[[], bool]:
        return lambda: len(open_questions(ctx, None).data.questions) == n

    for n, thread in enumerate(threads, 1):
        thread.start()
        wait_until(open_count_is(n), what=f"{n} open questions")
    third = send_message(ctx, "third?", "normal", True).data
    assert (third.reason, third.note) == (
        "unsupported",
        "2 questions sent over HTTP are already waiting for the "
        "user; ask this one in your own reply to the user instead",
    )
    waiting = open_questions(ctx, None).data.questions
    cid = waiting[0].conversation_id
    with pytest.raises(InvalidParameter) as which:
        reply_to_question(ctx, cid, "yes", None, "http")
    assert which.value.message == "2 questions are waiting (message_seq 1, 2); pass seq to pick one"
    for q in waiting:
        reply_to_question(ctx, cid, f"answer {q.message_seq}", q.message_seq, "http")
    for thread in threads:
        thread.join(30)
    assert sorted((r.message_seq, r.reply, r.reply_via) for r in results) == [
        (1, "answer 1", "http"),
        (2, "answer 2", "http"),
    ]
