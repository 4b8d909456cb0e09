"""vault_update_task through the write pipeline on a real vault: dry run, apply, the sha256
and line-text preconditions, an editor's save racing the write, undo through the
conversation record, daily/ and other refusals, encodings kept, wait_for_index with the live
writer, and the same payload on HTTP, MCP and the CLI (goldens)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api.serverkit import VAULT_AGENT, ServerThread, build_fixture_vault, http_mcp_client, make_context
from mcp import Client
from testkit import check_golden

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG, task_update
from vault_agent.config import Settings
from vault_agent.conversations.undo import undo_conversation
from vault_agent.errors import Conflict, Forbidden, InvalidParameter
from vault_agent.files.task_locate import place_of
from vault_agent.server.context import build_context, close_context

from .conftest import sha, tree

GOLDEN = Path(__file__).parent / "golden"
GARDEN, READING, DAILY = "Projects/Garden.md", "Notes/Reading.md", "daily/2024-05-14.md"
WATER = "- [ ] Water the beds 🔁 every week 📅 2024-05-15"  # line 13 of Garden.md
NOW = dt.datetime(2024, 5, 16, 9, 30)


def _settings(tmp_path: Path) -> Settings:
    return dataclasses.replace(build_fixture_vault(tmp_path, name="task-writes"), writes_enabled=True)


def _context(settings: Settings) -> AppContext:
    ctx = make_context(settings)
    ctx.clock = lambda: NOW
    return ctx


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[AppContext]:
    context = _context(_settings(tmp_path))
    try:
        yield context
    finally:
        close_context(context)


def _call(ctx: AppContext, **raw: Any) -> dict[str, Any]:
    return body_of(task_update.UPDATE_TASK, invoke(task_update.UPDATE_TASK, ctx, raw))


def _vault(ctx: AppContext) -> Path:
    return Path(ctx.settings.vault)


def _notes(vault: Path) -> dict[str, bytes]:
    return {p: b for p, b in tree(vault).items() if not p.startswith(".vault-agent/")}


def _json(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"


def test_dry_run_answers_the_diff_and_writes_nothing(ctx: AppContext) -> None:
    before = _notes(_vault(ctx))
    body = _call(ctx, path=GARDEN, line=13, status="done", dry_run=True)
    check_golden(GOLDEN / "task_update_dry_run.json", _json(body))
    assert _notes(_vault(ctx)) == before
    data = body["data"]
    assert (data["line"], data["next_occurrence"], data["sha256_before"]) == (
        14, {"line": 13, "text": "- [ ] Water the beds 🔁 every week 📅 2024-05-22"}, sha(before[GARDEN]),
    )  # fmt: skip


def test_apply_changes_exactly_the_planned_bytes_and_guards_the_next_change(ctx: AppContext) -> None:
    vault = _vault(ctx)
    original = (vault / GARDEN).read_bytes()
    dry = _call(ctx, path=f"{GARDEN}:13", status="done", dry_run=True)["data"]
    done = _call(
        ctx, path=GARDEN, line=13, status="done", expected_line=WATER, expected_sha256=dry["sha256_before"]
    )
    data = done["data"]
    assert (data["changed"], data["dry_run"], data["event_seq"] is not None) == (True, False, True)
    assert data["sha256"] == dry["sha256"] == sha((vault / GARDEN).read_bytes())
    expected = original.replace(
        WATER.encode() + b"\n",
        b"- [ ] Water the beds \xf0\x9f\x94\x81 every week \xf0\x9f\x93\x85 2024-05-22\n"
        + WATER.replace("[ ]", "[x]").encode()
        + " ✅ 2024-05-16\n".encode(),
    )
    assert (vault / GARDEN).read_bytes() == expected
    # the answer's line, text and sha256 are the preconditions of the next change
    reopened = _call(
        ctx,
        path=GARDEN,
        line=data["line"],
        status=" ",
        expected_line=data["text"],
        expected_sha256=data["sha256"],
    )
    assert reopened["data"]["text"] == WATER
    with pytest.raises(Conflict, match="changed since it was read"):
        _call(ctx, path=GARDEN, line=13, due="2024-06-01", expected_sha256=data["sha256"])


def test_a_line_that_moved_or_changed_is_a_conflict_naming_where_it_is(ctx: AppContext) -> None:
    vault = _vault(ctx)
    note = vault / GARDEN
    note.write_bytes(b"# Added on top\n" + note.read_bytes())
    before = note.read_bytes()
    with pytest.raises(Conflict, match="no longer holds the expected task text.*now line 14"):
        _call(ctx, path=GARDEN, line=13, status="done", expected_line=WATER)
    with pytest.raises(Conflict, match="no longer holds"):
        _call(ctx, path=GARDEN, line=14, status="done", expected_line=WATER + " changed")
    assert note.read_bytes() == before
    # a change elsewhere in the note is no conflict when only the line is a precondition
    assert _call(ctx, path=GARDEN, line=14, status="done", expected_line=WATER)["data"]["changed"]


def test_an_editor_save_between_the_read_and_the_write_is_a_conflict(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor saves (temp file + rename, as editors do) after the pipeline read the note
    and before its swap: CONFLICT, the editor's bytes stay, nothing of the agent's lands."""
    note = _vault(ctx) / GARDEN
    saved = note.read_bytes() + b"- [ ] Added in the editor\n"
    real = place_of

    def editor_saves_now(lines: list[str], line_no: int) -> str:
        tmp = note.with_name(".editor-save")
        tmp.write_bytes(saved)
        os.replace(tmp, note)
        return real(lines, line_no)

    monkeypatch.setattr("vault_agent.files.task_update.place_of", editor_saves_now)
    with pytest.raises(Conflict, match="changed while vault-agent was writing it"):
        _call(ctx, path=GARDEN, line=13, status="done", expected_line=WATER)
    assert note.read_bytes() == saved


def test_undo_through_the_conversation_restores_the_note(ctx: AppContext) -> None:
    vault = _vault(ctx)
    before = _notes(vault)

    async def session() -> tuple[Any, Any]:
        async with Client(build_mcp_server(ctx, CATALOG), mode="legacy") as client:
            done = await client.call_tool("vault_update_task", {"path": GARDEN, "line": 13, "status": "done"})
            ended = await client.call_tool(
                "end_conversation", {"title": "Watered", "summary": "ticked a task"}
            )
        return done, ended

    done, ended = asyncio.run(session())
    assert done.is_error is False and done.structured_content["data"]["next_occurrence"]["line"] == 13
    assert _notes(vault) != before
    cid = ended.structured_content["data"]["conversation"]["id"]
    plan = undo_conversation(ctx, cid, apply=False).data
    assert [(f.path, f.action, f.status) for f in plan.files] == [(GARDEN, "restore", "planned")]
    undo_conversation(ctx, cid, apply=True)
    assert _notes(vault) == before


@pytest.mark.parametrize(
    ("field", "phrase", "written"),
    [
        ("due", "tomorrow", "📅 2024-05-17"),
        ("due", "today", "📅 2024-05-16"),
        ("scheduled", "in 3 days", "⏳ 2024-05-19"),
        ("start", "next friday", "🛫 2024-05-24"),
        ("due", "2024-06-01", "📅 2024-06-01"),
    ],
)
def test_a_date_phrase_is_written_as_the_date_it_names_from_today(
    ctx: AppContext, field: str, phrase: str, written: str
) -> None:
    data = _call(ctx, path=GARDEN, line=13, dry_run=True, **{field: phrase})["data"]
    assert written in data["text"]  # today is NOW's date, Thursday 2024-05-16


@pytest.mark.parametrize(
    ("raw", "error", "needle"),
    [
        ({"path": DAILY, "line": 3, "status": "done"}, Forbidden, "daily note"),
        (
            {"path": f"{GARDEN}:23", "status": "done"},
            InvalidParameter,
            "inside code, a comment or a paragraph",
        ),
        (
            {"path": f"{GARDEN}:28", "status": "done"},
            InvalidParameter,
            "inside code, a comment or a paragraph",
        ),
        ({"path": f"{GARDEN}:2", "status": "done"}, InvalidParameter, "is no task"),
        ({"path": f"{GARDEN}:11", "status": "done"}, InvalidParameter, "is no task"),
        ({"path": f"{GARDEN}:99", "status": "done"}, InvalidParameter, "1 to 29"),
        ({"path": GARDEN, "status": "done"}, InvalidParameter, "'line' is required"),
        ({"path": GARDEN, "line": 13}, InvalidParameter, "at least one change"),
        ({"path": GARDEN, "line": 13, "due": "someday"}, InvalidParameter, "YYYY-MM-DD, today, tomorrow"),
        ({"path": GARDEN, "line": 13, "due": "2024-02-30"}, InvalidParameter, "YYYY-MM-DD"),
        ({"path": GARDEN, "line": 13, "status": "finished"}, InvalidParameter, "status symbol"),
        ({"path": ".system/x.md:1", "status": "done"}, Forbidden, "reserved"),
    ],
)
def test_refusals_are_named_and_write_nothing(
    ctx: AppContext, raw: dict[str, Any], error: type, needle: str
) -> None:
    before = _notes(_vault(ctx))
    with pytest.raises(error, match=needle):
        _call(ctx, **raw)
    assert _notes(_vault(ctx)) == before


def test_writes_are_refused_without_allow_writes(tmp_path: Path) -> None:
    context = _context(dataclasses.replace(_settings(tmp_path), writes_enabled=False))
    try:
        with pytest.raises(Forbidden):
            _call(context, path=GARDEN, line=13, status="done")
    finally:
        close_context(context)


def test_crlf_bom_and_dataview_notation_are_kept(ctx: AppContext) -> None:
    note = _vault(ctx) / "Notes/Windows.md"
    note.write_bytes(
        "\ufeff- [ ] Rent (repeat:: every month on the last) (due:: 2024-05-31)\r\nnext\r\n".encode()
    )
    body = _call(ctx, path="Notes/Windows.md:1", status="done")
    assert (
        note.read_bytes()
        == (
            "\ufeff- [ ] Rent (repeat:: every month on the last) (due:: 2024-06-30)\r\n"
            "- [x] Rent (repeat:: every month on the last) (due:: 2024-05-31) (completion:: 2024-05-16)\r\nnext\r\n"
        ).encode()
    )
    assert body["data"]["line"] == 2


def test_the_plugins_settings_file_is_read_at_write_time(ctx: AppContext) -> None:
    folder = _vault(ctx) / ".obsidian/plugins/obsidian-tasks-plugin"
    folder.mkdir(parents=True)
    (folder / "data.json").write_text(json.dumps({"recurrenceOnNextLine": True, "setCreatedDate": True}))
    data = _call(ctx, path=GARDEN, line=13, status="done")["data"]
    assert (data["line"], data["next_occurrence"]) == (
        13, {"line": 14, "text": "- [ ] Water the beds 🔁 every week ➕ 2024-05-16 📅 2024-05-22"},
    )  # fmt: skip


def test_on_completion_delete_removes_the_line(ctx: AppContext) -> None:
    data = _call(ctx, path=GARDEN, line=18, status="done")["data"]
    assert (data["removed"], data["line"], data["text"]) == (True, None, None)
    text = (_vault(ctx) / GARDEN).read_text(encoding="utf-8")
    assert "- [ ] Pay the water bill 🔁 every month on the 1st 📅 2024-06-01 🏁 delete\n\n## Examples" in text
    assert "[x] Pay the water bill" not in text


def test_wait_for_index_returns_once_the_live_index_holds_the_change(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    live = build_context(settings, watch=True)
    live.clock = lambda: NOW
    try:
        data = _call(live, path=GARDEN, line=13, status="done", wait_for_index=True)["data"]
        assert data["indexed"] is True and data["snapshot_id"] is not None
        op = CATALOG.named("grep")
        found = body_of(op, invoke(op, live, {"query": "2024-05-22", "mode": "plain"}))
        assert [r["path"] for r in found["data"]["results"]] == [GARDEN]
    finally:
        close_context(live)


def _serve(settings: Settings) -> tuple[ServerThread, AppContext]:
    context = _context(settings)
    return ServerThread(context).start(), context


def test_http_mcp_and_cli_answer_the_same_payload(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    args = {"path": READING, "line": 4, "status": "done", "dry_run": True}
    server, context = _serve(settings)
    try:
        status, _, http_text = server.request("POST", "/files/task", body=json.dumps(args).encode())

        async def mcp() -> Any:
            async with http_mcp_client(server.url, server.token) as client:
                return await client.call_tool("vault_update_task", args)

        result = asyncio.run(mcp())
        remote = ["--server", server.url, "--token", server.token, "--vault", str(settings.vault)]
        cli = ["task", "set", f"{READING}:4", "--status", "done"]
        dry = subprocess.run(
            [VAULT_AGENT, *cli, "--json", *remote], capture_output=True, text=True, timeout=120
        )
        human = subprocess.run([VAULT_AGENT, *cli, *remote], capture_output=True, text=True, timeout=120)
        before = (Path(settings.vault) / READING).read_bytes()
        applied = subprocess.run(
            [VAULT_AGENT, "task", "set", READING, "--line", "1", "--status", "x", *remote],
            capture_output=True,
            text=True,
            timeout=120,
        )  # line 1 is a heading: a named error, exit code 2
        cancel = subprocess.run(
            [VAULT_AGENT, "task", "set", f"{READING}:6", "--status=-", "--apply", *remote],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        server.stop()
        close_context(context)
    assert status == 200
    check_golden(GOLDEN / "task_update_http.json", _json(json.loads(http_text)))
    assert result.is_error is False and result.content[0].text == http_text
    assert dry.stdout == http_text + "\n"  # the CLI's default is a dry run, as asked of HTTP and MCP
    assert human.returncode == 0 and human.stdout.startswith(f"{READING}:5: would change (status 'x', done)")
    assert "add --apply to write it" in human.stdout
    assert (
        applied.returncode == 2
        and "[INVALID_PARAMETER]: line 1 of 'Notes/Reading.md' is no task" in applied.stderr
    )
    assert cancel.returncode == 0, cancel.stderr
    after = (Path(settings.vault) / READING).read_bytes()
    assert after == before.replace(
        b"- [ ] Plain task without fields\n", "- [-] Plain task without fields ❌ 2024-05-16\n".encode()
    )
