"""Tool annotations (RELIABILITY.md `annotations_contract`): honest hints for every tool."""

from __future__ import annotations

from vault_agent.api.mcp_server import annotations_of
from vault_agent.api.ops import CATALOG

# openWorldHint is left out on reads (budget of tools/list); writes send it as false.
READ = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True, "open_world_hint": None}
# Tools that remove or move user data must say so, whatever else changes.
MUST_BE_DESTRUCTIVE = {
    "vault_delete",
    "delete",
    "vault_move",
    "move",
    "vault_write",
    "vault_replace",
    "vault_edit",
}


def _hints(op):
    return annotations_of(op).model_dump(exclude={"title"})


def test_every_read_tool_is_read_only_and_idempotent() -> None:
    bad = [op.mcp_name for op in CATALOG.of_kind("read") if not op.side_effect and _hints(op) != READ]
    assert bad == []


def test_tools_that_message_the_user_are_neither_read_only_nor_idempotent() -> None:
    """send_message and end_conversation change what the user sees (not the vault): a client
    must not take them for harmless reads it may retry."""
    # MCP's defaults (readOnlyHint false, idempotentHint false) are not sent again (tools/list budget).
    defaults = {
        "read_only_hint": False,
        "destructive_hint": True,
        "idempotent_hint": False,
        "open_world_hint": True,
    }
    hints = {
        op.mcp_name: {k: defaults[k] if v is None else v for k, v in _hints(op).items()}
        for op in CATALOG.of_kind("read")
        if op.side_effect and op.agent_tool
    }
    assert hints == {
        name: {
            "read_only_hint": False,
            "destructive_hint": False,
            "idempotent_hint": False,
            "open_world_hint": True,
        }
        for name in ("send_message", "end_conversation")
    }


def test_write_tools_are_not_read_only_and_destructive_where_data_can_be_lost() -> None:
    writes = {op.mcp_name: _hints(op) for op in CATALOG.of_kind("write")}
    assert [n for n, h in writes.items() if h["read_only_hint"] or h["open_world_hint"]] == []
    assert [n for n in MUST_BE_DESTRUCTIVE & set(writes) if not writes[n]["destructive_hint"]] == []
    assert [
        op.mcp_name for op in CATALOG.of_kind("write") if _hints(op)["idempotent_hint"] != op.idempotent
    ] == []
