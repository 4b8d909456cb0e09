"""vault_tasks and DQL TASK on every surface: CLI = GET /tasks = POST /tasks = MCP, byte for
byte, on fixtures/tasks with the server's clock fixed; errors the same on each; goldens of
whole payloads (hand-checked against the fixture: tests/query/tasks/test_tasks_examples.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import check_golden

from api.serverkit import VAULT_AGENT, ServerThread, build_fixture_vault, http_mcp_client, make_context
from vault_agent.server.context import close_context

GOLDEN = Path(__file__).parent / "golden"
NOW = dt.datetime(2024, 5, 15, 9, 0, tzinfo=dt.UTC)
# (name, parameters, the same as CLI flags)
CASES: list[tuple[str, dict[str, Any], list[str] | None]] = [
    ("tasks-all", {"limit": 5}, ["--limit", "5"]),
    (
        "tasks-overdue",
        {"status": ["open"], "due": "before today", "sort": "due"},
        ["--status", "open", "--due", "before today", "--sort", "due"],
    ),
    (
        "tasks-project",
        {"tags": ["project"], "priority": ["high", "low"], "recurring": False, "folder": "Projects"},
        [
            "--tag",
            "project",
            "--priority",
            "high",
            "--priority",
            "low",
            "--not-recurring",
            "--folder",
            "Projects",
        ],
    ),
    ("tasks-invalid-dates", {"due": "invalid", "status": ["todo"]}, ["--due", "invalid", "--status", "todo"]),
    ("tasks-blocked", {"blocked": True, "heading": "report"}, ["--blocked", "--heading", "report"]),
    ("tasks-bad-date", {"due": "before the weekend"}, ["--due", "before the weekend"]),
    ("tasks-bad-sort", {"sort": "colour"}, ["--sort", "colour"]),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = build_fixture_vault(tmp_path_factory.mktemp("tsurf"), name="tasks")
    ctx = make_context(settings)
    ctx.clock = lambda: NOW
    thread = ServerThread(ctx).start()
    try:
        yield thread
    finally:
        thread.stop()
        close_context(ctx)


def _get_query(params: dict[str, Any]) -> str:
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        values = value if isinstance(value, list) else [value]
        pairs += [(key, str(v).lower() if isinstance(v, bool) else str(v)) for v in values]
    return urllib.parse.urlencode(pairs)


async def _mcp(server: ServerThread, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with http_mcp_client(server.url, server.token) as client:
        return [await client.call_tool(tool, args) for tool, args in calls]


def _cli(server: ServerThread, command: str, flags: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VAULT_AGENT, command, *flags, "--json", "--server", server.url, "--token", server.token],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_surface_answers_the_same_bytes(server: ServerThread) -> None:
    mcp = asyncio.run(_mcp(server, [("vault_tasks", params) for _, params, _ in CASES]))
    for (name, params, flags), result in zip(CASES, mcp, strict=True):
        status, _, posted = server.request("POST", "/tasks", body=json.dumps(params).encode())
        status_get, _, got = server.request("GET", "/tasks?" + _get_query(params))
        assert (status_get, got) == (status, posted), name
        assert result.content[0].text == posted, name
        assert result.is_error == (status >= 400), name
        if flags is not None:
            proc = _cli(server, "tasks", flags)
            assert proc.stdout == posted + "\n", (name, proc.stderr[-300:])
            assert proc.returncode == (2 if status == 400 else 0), name
        record = {"request": params, "status": status, "body": json.loads(posted)}
        check_golden(GOLDEN / f"{name}.json", json.dumps(record, ensure_ascii=False, indent=2) + "\n")


def test_dql_task_on_every_surface(server: ServerThread) -> None:
    params = {"dql": "TASK FROM #project WHERE !completed AND due < date(today) + dur(3 days) SORT due"}
    (result,) = asyncio.run(_mcp(server, [("vault_query", params)]))
    status, _, posted = server.request("POST", "/query", body=json.dumps(params).encode())
    assert result.content[0].text == posted and status == 200
    proc = _cli(server, "query", ["--dql", params["dql"]])
    assert proc.stdout == posted + "\n", proc.stderr[-300:]
    body = json.loads(posted)
    for item in body["data"]["results"]:
        item["mtime"] = "<volatile>"
    record = {"request": params, "status": status, "body": body}
    check_golden(GOLDEN / "query-dql-task.json", json.dumps(record, ensure_ascii=False, indent=2) + "\n")


def test_pages_follow_the_cursor_on_every_surface(server: ServerThread) -> None:
    seen: list[tuple[str, int]] = []
    cursor = None
    for _ in range(20):
        params: dict[str, Any] = {"limit": 4, "sort": "path"} | ({"cursor": cursor} if cursor else {})
        _, _, text = server.request("GET", "/tasks?" + _get_query(params))
        data = json.loads(text)["data"]
        seen += [(t["path"], t["line"]) for t in data["results"]]
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == data["total"] == 18
