"""vault_tasks(query=…) and vault_tasks(block=…) on every surface: CLI = GET /tasks = POST
/tasks = MCP, byte for byte, on fixtures/tasks plus a dashboard note, the server's clock
fixed; refusals the same on each; goldens of whole payloads; pages follow the cursor."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import check_golden

from api.serverkit import VAULT_AGENT, ServerThread, build_fixture_vault, make_context
from api.test_tasks_surfaces import _cli, _get_query, _mcp
from vault_agent.server.context import close_context

GOLDEN = Path(__file__).parent / "golden"
NOW = dt.datetime(2024, 5, 15, 9, 0, tzinfo=dt.UTC)
DASHBOARD = (
    "# Dashboard\n\n## Due soon\n\n```tasks\nnot done\ndue before in 7 days\nsort by due\n```\n\n"
    "## Report\n\n> [!todo] This note's folder\n> ```tasks\n> path includes {{query.file.folder}}\n"
    "> group by status.type\n> ```\n"
)
QUERY_GROUPED = (
    "not done\n(priority is above none) OR (tags include #work)\ngroup by priority\nlimit groups 2"
)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("tasks-query", {"query": "not done\ndue before today\nsort by due"}, ["--query", "not done\ndue before today\nsort by due"]),
    ("tasks-query-grouped", {"query": QUERY_GROUPED}, ["--query", QUERY_GROUPED]),
    ("tasks-block-index", {"block": "Dashboard#1"}, ["--block", "Dashboard#1"]),
    ("tasks-block-heading", {"block": "Dashboard#Report"}, ["--block", "Dashboard#Report"]),
    ("tasks-query-refused", {"query": "not done\nfilter by function task.isDone"},
     ["--query", "not done\nfilter by function task.isDone"]),
    ("tasks-query-with-filters", {"query": "done", "status": ["open"]}, ["--query", "done", "--status", "open"]),
    ("tasks-block-missing", {"block": "Dashboard#9"}, ["--block", "Dashboard#9"]),
]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = build_fixture_vault(
        tmp_path_factory.mktemp("tquery"), name="tasks", extra={"Dashboard.md": DASHBOARD}
    )
    ctx = make_context(settings)
    ctx.clock = lambda: NOW
    thread = ServerThread(ctx).start()
    try:
        yield thread
    finally:
        thread.stop()
        close_context(ctx)


def test_every_surface_answers_the_same_bytes(server: ServerThread) -> None:
    mcp = asyncio.run(_mcp(server, [("vault_tasks", params) for _, params, _ in CASES]))
    for (name, params, flags), result in zip(CASES, mcp, strict=True):
        status, _, posted = server.request("POST", "/tasks", body=json.dumps(params).encode())
        status_get, _, got = server.request("GET", "/tasks?" + _get_query(params))
        assert (status_get, got) == (status, posted), name
        assert result.content[0].text == posted, name
        assert result.is_error == (status >= 400), name
        proc = _cli(server, "tasks", flags)
        assert proc.stdout == posted + "\n", (name, proc.stderr[-300:])
        assert proc.returncode == {200: 0, 400: 2, 404: 4}[status], name
        record = {"request": params, "status": status, "body": json.loads(posted)}
        check_golden(GOLDEN / f"{name}.json", json.dumps(record, ensure_ascii=False, indent=2) + "\n")


def test_refusals_name_the_construct(server: ServerThread) -> None:
    bodies = {}
    for name, params, _ in CASES:
        status, _, posted = server.request("POST", "/tasks", body=json.dumps(params).encode())
        bodies[name] = (status, json.loads(posted))
    status, body = bodies["tasks-query-refused"]
    assert (status, body["error"]["code"]) == (400, "INVALID_QUERY")
    assert body["error"]["message"].startswith("tasks query: line 2: `filter by function`")
    assert bodies["tasks-query-with-filters"][1]["error"]["code"] == "INVALID_PARAMETER"
    assert bodies["tasks-block-missing"][1]["error"]["code"] == "NOT_FOUND"


def test_block_and_query_agree_and_pages_follow_the_cursor(server: ServerThread) -> None:
    _, _, by_block = server.request("POST", "/tasks", body=json.dumps({"block": "Dashboard.md#1"}).encode())
    _, _, by_query = server.request(
        "POST", "/tasks", body=json.dumps({"query": "not done\ndue before in 7 days\nsort by due"}).encode()
    )
    assert json.loads(by_block)["data"]["results"] == json.loads(by_query)["data"]["results"]
    seen: list[tuple[str, int]] = []
    params: dict[str, Any] = {"query": "not done", "limit": 2}
    for _ in range(20):
        _, _, page = server.request("POST", "/tasks", body=json.dumps(params).encode())
        data = json.loads(page)["data"]
        seen += [(t["path"], t["line"]) for t in data["results"]]
        if not data["next_cursor"]:
            break
        params["cursor"] = data["next_cursor"]
    assert len(seen) == len(set(seen)) == data["total"] == data["matched"]
    _, _, other = server.request(
        "POST", "/tasks", body=json.dumps({"query": "done", "cursor": params["cursor"]}).encode()
    )
    assert json.loads(other)["error"]["code"] == "INVALID_PARAMETER"


def test_human_output_shows_the_groups_and_the_block(server: ServerThread) -> None:
    def human(*flags: str) -> str:
        proc = subprocess.run(
            [VAULT_AGENT, "tasks", *flags, "--server", server.url, "--token", server.token],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-300:]
        return proc.stdout

    grouped = human("--query", QUERY_GROUPED)
    assert grouped.splitlines()[0] == "## Highest priority  (1)"
    assert "## High priority  (2)" in grouped and "the query's filters matched 4" in grouped
    assert human("--block", "Dashboard.md#1").splitlines()[0] == "block Dashboard.md#1 (line 5)"
