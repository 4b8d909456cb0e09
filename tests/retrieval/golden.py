"""Golden JSON files: compared whole; regenerated with pytest --update-golden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import testkit

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.errors import VaultAgentError

GOLDEN_DIR = Path(__file__).parent / "golden"


def call(ctx: AppContext, name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The exact HTTP/MCP body of one operation call."""
    op = CATALOG.named(name)
    return body_of(op, invoke(op, ctx, raw))


def error_of(ctx: AppContext, name: str, raw: dict[str, Any]) -> dict[str, str]:
    """The code and message of a call that must fail."""
    try:
        call(ctx, name, raw)
    except VaultAgentError as exc:
        return {"code": exc.code, "message": exc.message}
    raise AssertionError(f"{name} {raw} did not fail")


def check_golden(name: str, body: Any) -> None:
    text = json.dumps(body, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    testkit.check_golden(GOLDEN_DIR / f"{name}.json", text)
