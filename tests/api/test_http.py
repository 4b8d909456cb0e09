"""The aiohttp surface: generated routes, parameter parsing, envelope/raw bodies, errors, logs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from multidict import MultiDict

from api.serverkit import LogCapture, ServerThread, make_context
from api.tempops import TEST_CATALOG, ProbeParams
from vault_agent.api.http import build_http_app, http_operations
from vault_agent.api.http_invoke import params_from_query
from vault_agent.api.ops import CATALOG
from vault_agent.api.security import AccessPolicy
from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter
from vault_agent.server.context import close_context

OUTLINE = {
    "schema": "knowtation.note_outline/v1",
    "path": "projects/alpha/plan.md",
    "title": "Alpha Plan",
    "headings": [
        {"level": 1, "text": "Alpha plan", "id": "h1-alpha-plan-0001"},
        {"level": 2, "text": "Goals", "id": "h2-goals-0002"},
    ],
    "truncated": False,
}


@pytest.fixture
def probe_server(vault_settings: Settings, logs: LogCapture) -> Iterator[ServerThread]:
    ctx = make_context(vault_settings)
    thread = ServerThread(ctx, catalog=TEST_CATALOG).start()
    try:
        yield thread
    finally:
        thread.stop()
        close_context(ctx)


def test_one_route_per_registry_operation(vault_settings: Settings) -> None:
    app = build_http_app(make_context(vault_settings), CATALOG, AccessPolicy(token="t"))
    routes = {(r.method, r.resource.canonical) for r in app.router.routes() if r.resource is not None}
    primary = {(op.http_method, op.http_path) for op in http_operations(CATALOG)}
    expected = primary | {("GET", op.http_path) for op in http_operations(CATALOG) if op.http_both}
    extra = {
        ("GET", "/messages/stream"),
        ("GET", "/conversations/{id}"),  # conversations' own routes
        ("GET", "/conversations/{id}/questions"),
        ("POST", "/conversations/{id}/reply"),
        ("POST", "/conversations/{id}/undo"),
    }
    assert {r for r in routes if r[1] != "/mcp"} == expected | extra
    assert len(primary) == len(http_operations(CATALOG))


def test_envelope_body(server: ServerThread) -> None:
    status, headers, body = server.get_json("/tags?limit=2")
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert body == {
        "data": {
            "tags": [{"tag": "project", "noteCount": 3}, {"tag": "research/ml", "noteCount": 3}],
            "indexFreshness": "fresh",
        },
        "warnings": [
            {
                "code": "TAGS_TRUNCATED",
                "message": "only the 2 most used tags are listed; raise 'limit' (max 200)",
            }
        ],
    }


def test_raw_contract_body_and_freshness_header(server: ServerThread) -> None:
    status, headers, body = server.get_json("/note-outline?path=projects/alpha/plan.md")
    assert (status, body) == (200, OUTLINE)
    assert headers["X-Index-Freshness"] == "fresh"
    assert [w["code"] for w in json.loads(headers["X-Index-Warnings"])] == ["NEXT_READ"]


def test_camel_and_snake_names_are_the_same_parameter(server: ServerThread) -> None:
    camel = server.get_json("/tree?depth=1&directOnly=true")
    snake = server.get_json("/tree?depth=1&direct_only=true")
    assert camel[0] == snake[0] == 200
    assert camel[2] == snake[2]
    assert camel[2]["data"]["root"]["noteCount"] == 1  # direct-only: README.md alone


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("depth=11", "parameter 'depth' must be an integer from 1 to 10"),
        ("depth=two", "parameter 'depth' must be an integer from 1 to 10"),
        ("bogus=1", "unknown parameter 'bogus'; the parameters are: depth, limit, directOnly"),
        ("depth=1&depth=2", "parameter 'depth' is given more than once"),
    ],
)
def test_bad_parameters_are_invalid_parameter(server: ServerThread, query: str, message: str) -> None:
    status, _, body = server.get_json(f"/tree?{query}")
    assert (status, body) == (400, {"error": {"code": "INVALID_PARAMETER", "message": message}})


def test_unknown_route_and_wrong_method(server: ServerThread) -> None:
    status, _, text = server.request("GET", "/nope")
    assert (status, json.loads(text)) == (
        404,
        {"error": {"code": "NOT_FOUND", "message": "no such route; see docs/http-api.md for the routes"}},
    )
    status, _, text = server.request("POST", "/overview", body=b"{}")
    assert (status, json.loads(text)["error"]["code"]) == (405, "INVALID_PARAMETER")


def test_params_from_query_nests_dotted_keys_and_parses_json() -> None:
    query = MultiDict(
        [
            ("path", "a.md"),
            ("span.startLine", "3"),
            ("span.end_line", "9"),
            ("labels", "x"),
            ("labels", "y"),
            ("options", '{"k": [1, 2]}'),
        ]
    )
    assert params_from_query(ProbeParams, query) == {
        "path": "a.md",
        "span": {"startLine": "3", "end_line": "9"},
        "labels": ["x", "y"],
        "options": {"k": [1, 2]},
    }
    assert params_from_query(ProbeParams, MultiDict([("labels", '["a", "b"]')])) == {"labels": ["a", "b"]}
    with pytest.raises(InvalidParameter, match="parameter 'options' must be valid JSON"):
        params_from_query(ProbeParams, MultiDict([("options", "{nope")]))


def test_get_and_post_parameters_reach_the_core_function(probe_server: ServerThread) -> None:
    expected = {
        "data": {
            "path": "a.md",
            "span": {"startLine": 3, "endLine": 9},
            "labels": ["x"],
            "options": {},
            "limit": 5,
        },
        "warnings": [],
    }
    status, _, body = probe_server.get_json(
        "/test-probe-get?path=a.md&span.start_line=3&span.endLine=9&labels=x&limit=5"
    )
    assert (status, body) == (200, expected)
    payload = {"path": "a.md", "span": {"start_line": 3, "end_line": 9}, "labels": ["x"], "limit": 5}
    status, _, text = probe_server.request("POST", "/test-probe", body=json.dumps(payload).encode())
    assert (status, json.loads(text)) == (200, expected)


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'"text"'])
def test_post_body_must_be_a_json_object(probe_server: ServerThread, body: bytes) -> None:
    status, _, text = probe_server.request("POST", "/test-probe", body=body)
    assert (status, json.loads(text)) == (
        400,
        {"error": {"code": "INVALID_PARAMETER", "message": "the request body must be a JSON object"}},
    )


def test_unexpected_exception_is_internal_with_only_an_incident_id(
    probe_server: ServerThread, logs: LogCapture, vault_settings: Settings
) -> None:
    status, _, text = probe_server.request("GET", "/test-crash")
    body = json.loads(text)
    assert status == 500
    assert body["error"]["code"] == "INTERNAL"
    incident = body["error"]["message"].rsplit(" ", 1)[1]
    assert body == {
        "error": {
            "code": "INTERNAL",
            "message": f"internal error; see the server log for incident {incident}",
        }
    }
    logged = [json.loads(ln) for ln in logs.lines if incident in ln]
    assert logged and logged[0]["incident"] == incident
    assert "RuntimeError: boom in <vault>/secret.md" in logged[0]["exc"]
    vault_abs = str(Path(vault_settings.vault).resolve())
    assert not [ln for ln in logs.lines if vault_abs in ln or str(vault_settings.vault) in ln]


def test_writes_disabled_are_forbidden(probe_server: ServerThread) -> None:
    status, _, text = probe_server.request("POST", "/test-write", body=b'{"path": "a.md"}')
    assert (status, json.loads(text)) == (
        403,
        {
            "error": {
                "code": "FORBIDDEN",
                "message": "write tools are disabled; start the server with --allow-writes to enable them",
            }
        },
    )


def test_writes_enabled_are_callable(vault_settings: Settings) -> None:
    settings = dataclasses.replace(vault_settings, writes_enabled=True)
    ctx = make_context(settings)
    thread = ServerThread(ctx, catalog=TEST_CATALOG).start()
    try:
        status, _, text = thread.request("POST", "/test-write", body=b'{"path": "a.md", "dryRun": true}')
    finally:
        thread.stop()
        close_context(ctx)
    assert (status, json.loads(text)) == (200, {"data": {"path": "a.md", "dryRun": True}, "warnings": []})


def test_request_log_has_one_line_per_request_and_no_query(server: ServerThread, logs: LogCapture) -> None:
    before = len(logs.requests())
    server.request("GET", "/tags?limit=3")
    server.request("GET", "/note-outline?path=projects/alpha/secret-notes.md")
    server.request("GET", "/overview", token="wrong")
    lines = logs.requests()[before:]
    assert [(ln["route"], ln["method"], ln["status"]) for ln in lines] == [
        ("/tags", "GET", 200),
        ("/note-outline", "GET", 200),
        ("/overview", "GET", 401),
    ]
    for ln in lines:
        assert set(ln) == {
            "ts", "level", "logger", "msg", "event", "route", "method", "status",
            "duration_ms", "request_bytes", "response_bytes",
        }  # fmt: skip
        assert "limit" not in json.dumps(ln) and "secret-notes" not in json.dumps(ln)
