"""vault_query with filters and DQL: CLI = GET /query = POST /query = MCP, byte for byte;
errors the same on each (INVALID_QUERY: 400, isError, exit 2); goldens of whole payloads."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import check_golden

from api.serverkit import VAULT_AGENT, ServerThread, build_fixture_vault, http_mcp_client, serving

GOLDEN = Path(__file__).parent / "golden"
WHERE = [{"field": "status", "op": "!=", "value": "done"}]
# (name, parameters, the same as CLI flags)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "query-filters",
        {"tags": ["homework"], "where": WHERE, "sort": "-due", "select": ["due", "status"]},
        [
            "--tag",
            "homework",
            "--where",
            "status != done",
            "--sort",
            "-due",
            "--select",
            "due",
            "--select",
            "status",
        ],
    ),
    (
        "query-dql",
        {"dql": 'TABLE rating AS "Rating", file.etags FROM #games SORT rating DESC', "limit": 2},
        ["--dql", 'TABLE rating AS "Rating", file.etags FROM #games SORT rating DESC', "--limit", "2"],
    ),
    (
        "query-links",
        {"links_to": "Alpha", "any_tags": ["status", "projects"]},
        ["--links-to", "Alpha", "--any-tag", "status", "--any-tag", "projects"],
    ),
    (
        "query-mismatch",
        {"where": [{"field": "priority", "op": ">=", "value": 2}], "select": ["priority"]},
        ["--where", "priority >= 2", "--select", "priority"],
    ),
    ("query-bad-dql", {"dql": "TABLE x GROUP BY y"}, ["--dql", "TABLE x GROUP BY y"]),
    (
        "query-bad-op",
        {"where": [{"field": "status", "op": "like", "value": "x"}]},
        None,  # type: ignore[list-item]  # the CLI's --where parser refuses it before sending
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = build_fixture_vault(tmp_path_factory.mktemp("qsurf"), name="query")
    with serving(settings) as thread:
        yield thread


def _get_query(params: dict[str, Any]) -> str:
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            pairs.append((key, json.dumps(value)))
        elif isinstance(value, list):
            pairs += [(key, v) for v in value]
        else:
            pairs.append((key, str(value)))
    return urllib.parse.urlencode(pairs)


async def _mcp(server: ServerThread, calls: list[dict[str, Any]]) -> list[Any]:
    async with http_mcp_client(server.url, server.token) as client:
        return [await client.call_tool("vault_query", args) for args in calls]


def test_every_surface_answers_the_same_bytes(server: ServerThread) -> None:
    mcp = asyncio.run(_mcp(server, [params for _, params, _ in CASES]))
    for (name, params, flags), result in zip(CASES, mcp, strict=True):
        status, _, posted = server.request("POST", "/query", body=json.dumps(params).encode())
        status_get, _, got = server.request("GET", "/query?" + _get_query(params))
        assert (status_get, got) == (status, posted), name
        assert result.content[0].text == posted, name
        assert result.is_error == (status >= 400), name
        if flags is not None:
            proc = subprocess.run(
                [VAULT_AGENT, "query", *flags, "--json", "--server", server.url, "--token", server.token],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.stdout == posted + "\n", (name, proc.stderr[-300:])
            assert proc.returncode == (2 if status == 400 else 0), name
        body = json.loads(posted)
        for result_item in body.get("data", {}).get("results", []):
            result_item["mtime"] = "<volatile>"
        record = {"request": params, "status": status, "body": body}
        check_golden(GOLDEN / f"{name}.json", json.dumps(record, ensure_ascii=False, indent=2) + "\n")


def test_errors_carry_the_code_and_where(server: ServerThread) -> None:
    status, _, text = server.request("POST", "/query", body=json.dumps({"dql": "LIST WHERE x >"}).encode())
    assert (status, json.loads(text)) == (
        400,
        {
            "error": {
                "code": "INVALID_QUERY",
                "message": "dql: expected an expression at line 1, column 15, found the end of the query",
            }
        },
    )
    status, _, text = server.request("GET", "/query?limit=501")
    grep_status, _, grep_text = server.request("GET", "/grep?query=x&limit=501")
    assert (status, json.loads(text)["error"]["code"]) == (400, "INVALID_PARAMETER")
    assert json.loads(text)["error"]["message"] == json.loads(grep_text)["error"]["message"].replace(
        "vault_search", "vault_query"
    )
    assert grep_status == 400


def test_the_cli_where_flag_parses_every_operator() -> None:
    from vault_agent.api.human.query import parse_where

    assert parse_where(["a = b", "n>=3", "x != true", "d < 2024-05-01", 't = "3"', "s in a, 2,null",
                        "tags contains x y", "due exists", "r missing"]) == [
        {"field": "a", "op": "=", "value": "b"},
        {"field": "n", "op": ">=", "value": 3},
        {"field": "x", "op": "!=", "value": True},
        {"field": "d", "op": "<", "value": "2024-05-01"},
        {"field": "t", "op": "=", "value": "3"},
        {"field": "s", "op": "in", "value": ["a", 2, None]},
        {"field": "tags", "op": "contains", "value": "x y"},
        {"field": "due", "op": "exists"},
        {"field": "r", "op": "missing"},
    ]  # fmt: skip
    with pytest.raises(ValueError):
        parse_where(["no operator here"])
