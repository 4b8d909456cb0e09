"""Golden JSON files: compared whole; regenerated with VAULT_AGENT_UPDATE_GOLDEN=1."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vault_agent.api.registry import REGISTRY, AppContext, body_of, invoke, operations

GOLDEN_DIR = Path(__file__).parent / "golden"


def call(ctx: AppContext, name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The exact HTTP/MCP body of one operation call."""
    operations()
    op = REGISTRY[name]
    return body_of(op, invoke(op, ctx, raw))


def check_golden(name: str, body: Any) -> None:
    path = GOLDEN_DIR / f"{name}.json"
    text = json.dumps(body, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    if os.environ.get("VAULT_AGENT_UPDATE_GOLDEN") == "1" or not path.exists():
        if os.environ.get("VAULT_AGENT_UPDATE_GOLDEN") != "1":
            raise AssertionError(f"golden {name} missing; run with VAULT_AGENT_UPDATE_GOLDEN=1")
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert json.loads(text) == json.loads(path.read_text(encoding="utf-8"))
