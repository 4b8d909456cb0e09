"""MCP details clients trip on (issue 23): portable schemas, `logging` declared and honoured,
`/.well-known/*` not behind the token, and a 401 that says where the token is."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import warnings
from typing import Any

import pytest
from conversations.kit import Inbox, http_client
from mcp.shared.exceptions import MCPDeprecationWarning

from api.serverkit import ServerThread, build_fixture_vault, serving
from vault_agent.api.tool_schema import portability_warnings


def test_every_published_schema_is_portable(server: ServerThread) -> None:
    """The tool list as the SDK client receives it: no type lists, null, unions or refs."""

    async def listed() -> list[Any]:
        async with http_client(server.url, server.token, Inbox()) as client:
            return list((await client.list_tools()).tools)

    tools = asyncio.run(listed())
    warnings = {t.name: w for t in tools if (w := portability_warnings(t.input_schema))}
    assert (len(tools), warnings) == (len(tools), {})
    assert "null" not in json.dumps([t.input_schema for t in tools])


def test_portability_check_finds_what_clients_trip_on() -> None:
    bad = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "c": {"type": "string", "enum": ["x", None]},
            "d": {"type": "object"},
            "e": {"type": "array"},
            "f": {"$ref": "#/$defs/F"},
        },
    }
    assert portability_warnings(bad) == [
        "a: type list ['string', 'null']",
        "b: type None is not one plain JSON type",
        "b: uses anyOf",
        "c: enum of other values than strings",
        "d: object without properties",
        "e: array without items",
        "f: type None is not one plain JSON type",
        "f: uses $ref",
    ]


@pytest.fixture(scope="module")
def server_with_writes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    settings = dataclasses.replace(
        build_fixture_vault(tmp_path_factory.mktemp("details")),
        writes_enabled=True,
        tool_profile="agent-files",
    )
    with serving(settings) as thread:
        yield thread


def test_every_schema_of_every_profile_is_portable(server_with_writes: ServerThread) -> None:
    async def listed() -> list[Any]:
        async with http_client(server_with_writes.url, server_with_writes.token, Inbox()) as client:
            return list((await client.list_tools()).tools)

    tools = asyncio.run(listed())
    assert len(tools) > 30
    assert {t.name: w for t in tools if (w := portability_warnings(t.input_schema))} == {}


def test_logging_is_declared_and_the_level_is_honoured(server: ServerThread) -> None:
    """send_message notifies with notifications/message: `logging` is declared, setLevel obeyed."""
    inbox = Inbox()

    async def session() -> tuple[Any, list[str], list[int]]:
        delivered = []
        async with http_client(server.url, server.token, inbox) as client:
            caps = client.server_capabilities
            with warnings.catch_warnings():  # the SDK marks logging deprecated as of 2026-07-28
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("error")
            quiet = await client.call_tool("send_message", {"text": "only errors, please"})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("info")
            loud = await client.call_tool("send_message", {"text": "now tell me"})
            high = await client.call_tool("send_message", {"text": "urgent", "priority": "high"})
            for result in (quiet, loud, high):
                delivered.append(result.structured_content["data"]["delivered_to"])
        return caps, inbox.messages(), delivered

    caps, messages, delivered = asyncio.run(session())
    assert caps.logging is not None
    assert messages == ["now tell me", "urgent"]
    assert delivered == [0, 1, 1]  # the quiet one reached no listener


def test_well_known_is_404_without_a_token(server: ServerThread) -> None:
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/x",
    ):
        status, headers, text = server.request("GET", path, token=None)
        body = json.loads(text)
        assert (status, body["error"]["code"]) == (404, "NOT_FOUND"), path
        assert "WWW-Authenticate" not in headers
        assert body["error"]["message"] == (
            "no OAuth here: this server takes a bearer token, 'Authorization: Bearer <token>'; "
            "the token is in the file <vault>/.vault-agent/token"
        )


def test_401_names_the_token_file_and_how_to_send_it(server: ServerThread) -> None:
    status, headers, text = server.request("POST", "/mcp", body=b"{}", token=None)
    message = json.loads(text)["error"]["message"]
    assert status == 401
    assert "<vault>/.vault-agent/token" in headers["WWW-Authenticate"]
    assert "Authorization: Bearer <token>" in headers["WWW-Authenticate"]
    assert "<vault>/.vault-agent/token" in message and "'Authorization: Bearer <token>'" in message
    vault = str(server.ctx.settings.vault)
    assert vault not in message and vault not in headers["WWW-Authenticate"]
