"""vault_rename_tag through `invoke` on a real indexed vault: dry run, apply, paging,
merges, bad input, a note changed by another writer between plan and write, undo through
the conversation record, and the same payload on HTTP, MCP and the CLI."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api.serverkit import VAULT_AGENT, build_fixture_vault, http_mcp_client, make_context, serving
from mcp import Client
from testkit import check_golden, wait_until

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.conversations.undo import undo_conversation
from vault_agent.errors import Forbidden, InvalidParameter
from vault_agent.indexer.build import build_index
from vault_agent.server.context import close_context

from .conftest import sha, tree

GOLDEN = Path(__file__).parent / "golden"
GARDEN, KITCHEN, MIXED = "projects/garden.md", "projects/kitchen.md", "notes/mixed.md"


@pytest.fixture
def tags_ctx(tmp_path: Path) -> Iterator[AppContext]:
    settings = dataclasses.replace(build_fixture_vault(tmp_path, name="tags"), writes_enabled=True)
    ctx = make_context(settings)
    try:
        yield ctx
    finally:
        close_context(ctx)


def _call(ctx: AppContext, **raw: Any) -> dict[str, Any]:
    op = CATALOG.named("rename-tag")
    return body_of(op, invoke(op, ctx, raw))


def _vault(ctx: AppContext) -> Path:
    return Path(ctx.settings.vault)


def _notes(vault: Path) -> dict[str, bytes]:
    """Every file of the vault but the state dir inside it (its event log grows with writes)."""
    return {p: b for p, b in tree(vault).items() if not p.startswith(".vault-agent/")}


def test_dry_run_lists_each_note_with_its_diff_and_writes_nothing(tags_ctx: AppContext) -> None:
    before = _notes(_vault(tags_ctx))
    body = _call(tags_ctx, old="#idea", new="Project/idea")
    check_golden(GOLDEN / "rename_tag_dry_run.json", json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    assert _notes(_vault(tags_ctx)) == before
    data = body["data"]
    assert [n["path"] for n in data["notes"]] == [MIXED, GARDEN, KITCHEN]  # never notes/code-only.md
    assert data["skipped"] == [
        {"path": "daily/2024-01-02.md", "reason": "forbidden"}
    ]  # daily/ is append-only


def test_apply_writes_exactly_the_planned_bytes(tags_ctx: AppContext) -> None:
    vault = _vault(tags_ctx)
    dry = _call(tags_ctx, old="idea", new="Project/idea")["data"]
    untouched = {p: b for p, b in _notes(vault).items() if p not in (MIXED, GARDEN, KITCHEN)}
    done = _call(tags_ctx, old="idea", new="Project/idea", apply=True)
    data = done["data"]
    assert (data["dry_run"], data["notes_total"], data["occurrences_total"]) == (False, 3, 17)
    assert data["event_seq"] is not None and done["warnings"] == []
    assert [{**n} for n in data["notes"]] == dry["notes"]  # the same plan, now written
    for note in data["notes"]:
        assert sha((vault / note["path"]).read_bytes()) == note["sha256"]
    assert {p: b for p, b in _notes(vault).items() if p in untouched} == untouched
    again = _call(tags_ctx, old="idea", new="Project/idea")["data"]  # the snapshot still names them
    assert (again["notes_total"], again["notes"]) == (0, [])


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"old": "idea", "new": "has space"}, "new cannot be a tag name"),
        ({"old": "idea", "new": "1984"}, "not a digit"),
        ({"old": "idea", "new": "a//b"}, "empty level"),
        ({"old": "idea", "new": "a.b"}, "punctuation"),
        ({"old": "", "new": "x"}, "old cannot be a tag name: it is empty"),
        ({"old": "#idea", "new": "idea"}, "same tag"),
        ({"old": "idea", "new": "x", "limit": 0}, "limit"),
        ({"old": "idea", "new": "x", "cursor": "-1"}, "cursor"),
    ],
)
def test_bad_input_is_invalid_parameter(tags_ctx: AppContext, raw: dict[str, Any], needle: str) -> None:
    before = _notes(_vault(tags_ctx))
    with pytest.raises(InvalidParameter) as caught:
        _call(tags_ctx, **raw, apply=True)
    assert needle in caught.value.message
    assert _notes(_vault(tags_ctx)) == before


def test_refused_without_writes(tags_ctx: AppContext) -> None:
    ctx = make_context(dataclasses.replace(tags_ctx.settings, writes_enabled=False))
    try:
        with pytest.raises(Forbidden):
            _call(ctx, old="idea", new="seed")
    finally:
        close_context(ctx)


def test_pages_of_a_dry_run(tags_ctx: AppContext) -> None:
    first = _call(tags_ctx, old="idea", new="seed", limit=2)["data"]
    assert ([n["path"] for n in first["notes"]], first["next_cursor"], first["truncated"]) == (
        [MIXED, GARDEN],
        "2",
        True,
    )
    second = _call(tags_ctx, old="idea", new="seed", limit=2, cursor=first["next_cursor"])["data"]
    assert ([n["path"] for n in second["notes"]], second["next_cursor"], second["notes_total"]) == (
        [KITCHEN],
        None,
        3,
    )


def test_renaming_onto_an_existing_tag_says_it_merges(tags_ctx: AppContext) -> None:
    body = _call(tags_ctx, old="idea/seeds", new="ideas")  # `ideas` is in projects/garden.md
    assert (body["data"]["merged"], body["data"]["merged_tags"]) == (True, ["ideas"])
    assert [w["code"] for w in body["warnings"]] == ["TAG_MERGED"]
    case_only = _call(tags_ctx, old="idea", new="IDEA")
    assert (case_only["data"]["merged"], case_only["data"]["notes_total"], case_only["warnings"]) == (
        False,
        3,
        [],
    )


def test_encodings_are_kept_and_undecodable_notes_skipped(tmp_path: Path) -> None:
    settings = dataclasses.replace(build_fixture_vault(tmp_path, name="tags"), writes_enabled=True)
    vault = Path(settings.vault)
    (vault / "notes/crlf.md").write_bytes(b"---\r\ntags: [idea]\r\n---\r\nline #idea\r\n")
    (vault / "notes/latin1.md").write_bytes(b"caf\xe9 #idea\n")
    build_index(settings)
    ctx = make_context(settings)
    try:
        data = _call(ctx, old="idea", new="seed", apply=True)["data"]
    finally:
        close_context(ctx)
    assert (vault / "notes/crlf.md").read_bytes() == b"---\r\ntags: [seed]\r\n---\r\nline #seed\r\n"
    assert (vault / "notes/latin1.md").read_bytes() == b"caf\xe9 #idea\n"
    assert {"path": "notes/latin1.md", "reason": "not_utf8"} in data["skipped"]


def test_a_note_changed_between_plan_and_write_is_skipped_and_named(
    tags_ctx: AppContext, caplog: pytest.LogCaptureFixture
) -> None:
    """Another writer saves a planned note while the rename waits for the write lock."""
    caplog.set_level(logging.INFO, logger="vault_agent.files")
    vault = _vault(tags_ctx)
    out: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: out.update(body=_call(tags_ctx, old="idea", new="seed", apply=True))
    )
    with tags_ctx.write_lock.hold():  # every write of the rename waits here
        worker.start()
        wait_until(
            lambda: any("rename-tag planned" in r.getMessage() for r in caplog.records), what="the plan"
        )
        with (vault / GARDEN).open("a", encoding="utf-8") as editor:  # an editor's in-place save
            editor.write("\nAdded in the editor #idea\n")
        edited = (vault / GARDEN).read_bytes()
    worker.join(timeout=120)
    data = out["body"]["data"]
    assert [n["path"] for n in data["notes"]] == [MIXED, KITCHEN]
    assert data["skipped"] == [
        {"path": "daily/2024-01-02.md", "reason": "forbidden"},
        {"path": GARDEN, "reason": "changed"},
    ]
    assert [w["code"] for w in out["body"]["warnings"]] == ["NOTES_SKIPPED"]
    assert (vault / GARDEN).read_bytes() == edited  # never overwritten
    assert "#seed" in (vault / MIXED).read_text(encoding="utf-8")


def test_undo_through_the_conversation_restores_every_note(tags_ctx: AppContext) -> None:
    vault = _vault(tags_ctx)
    before = _notes(vault)

    async def session() -> tuple[Any, Any]:
        async with Client(build_mcp_server(tags_ctx, CATALOG), mode="legacy") as client:
            renamed = await client.call_tool(
                "vault_rename_tag", {"old": "idea", "new": "seed", "apply": True}
            )
            ended = await client.call_tool(
                "end_conversation", {"title": "Renamed a tag", "summary": "idea to seed"}
            )
        return renamed, ended

    renamed, ended = asyncio.run(session())
    assert renamed.is_error is False and renamed.structured_content["data"]["notes_total"] == 3
    assert _notes(vault) != before
    cid = ended.structured_content["data"]["conversation"]["id"]
    plan = undo_conversation(tags_ctx, cid, apply=False).data
    assert [(f.path, f.action, f.status) for f in plan.files] == [
        (MIXED, "restore", "planned"), (GARDEN, "restore", "planned"), (KITCHEN, "restore", "planned"),
    ]  # fmt: skip
    undo_conversation(tags_ctx, cid, apply=True)
    assert _notes(vault) == before


def test_http_mcp_and_cli_answer_the_same_payload(tmp_path: Path) -> None:
    settings = dataclasses.replace(build_fixture_vault(tmp_path, name="tags"), writes_enabled=True)
    args = {"old": "idea", "new": "seed", "limit": 2}
    with serving(settings) as server:
        status, _, http_text = server.request("POST", "/files/rename-tag", body=json.dumps(args).encode())

        async def mcp() -> Any:
            async with http_mcp_client(server.url, server.token) as client:
                return await client.call_tool("vault_rename_tag", args)

        result = asyncio.run(mcp())
        remote = ["--server", server.url, "--token", server.token, "--vault", str(settings.vault)]
        dry = subprocess.run(
            [VAULT_AGENT, "rename-tag", "idea", "seed", "--limit", "2", "--json", *remote],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        applied = subprocess.run(
            [VAULT_AGENT, "rename-tag", "idea", "seed", "--apply", *remote],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert status == 200
    assert result.is_error is False and result.content[0].text == http_text
    assert dry.stdout == http_text + "\n"
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.startswith("#idea -> #seed: renamed 17 tag(s) in 3 note(s)")
    assert "#seed" in (Path(settings.vault) / KITCHEN).read_text(encoding="utf-8")
