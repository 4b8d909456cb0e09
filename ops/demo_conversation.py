"""Run one real agent session against `vault-agent mcp` (stdio, real SDK client) on a copy
of a fixture vault, then print what the user sees: `conversations list`, `show`, `messages`,
`undo` (dry run, then --apply).

    .venv/bin/python ops/demo_conversation.py [--keep DIR]

The "user" is this script: it prints each message notification as it arrives and answers
the one question through the elicitation callback.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).parent / "vault-agent")


def run(*args: str, vault: Path) -> str:
    proc = subprocess.run([CLI, *args, "--vault", str(vault)], capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


async def session(vault: Path) -> str:
    async def on_log(params: Any) -> None:
        if params.logger == "vault-agent.messages":
            print(f"  [notification] {params.data['text']}")

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        print(f"  [question] {params.message}\n  [user answers] yes, keep the old one in Archive")
        return types.ElicitResult(action="accept", content={"reply": "yes, keep the old one in Archive"})

    params = StdioServerParameters(
        command=CLI,
        args=["mcp", "--vault", str(vault), "--allow-writes", "--no-watch"],
        env={"VAULT_AGENT_LOG_LEVEL": "WARNING"},
        cwd=str(vault),
    )
    client = Client(
        params,
        mode="legacy",
        logging_callback=on_log,
        elicitation_callback=on_elicit,
        client_info=types.Implementation(name="demo-agent", version="1.0"),
    )
    async with client as c:
        await c.call_tool("send_message", {"text": "Looking at the alpha project plan."})
        await c.call_tool("vault_stat", {"path": "projects/alpha/plan.md"})
        await c.call_tool("get_note_outline", {"path": "projects/alpha/plan.md"})
        ask = await c.call_tool(
            "send_message", {"text": "May I rewrite the plan's summary section?", "expect_reply": True}
        )
        print(f"  [tool result] reply={ask.structured_content['data']['reply']!r}")
        await c.call_tool(
            "vault_write",
            {
                "path": "projects/alpha/plan.md",
                "mode": "append",
                "content": "\n## Summary\n\nShip the parser first.\n",
            },
        )
        await c.call_tool(
            "vault_create",
            {"path": "projects/alpha/decisions.md", "content": "# Decisions\n\n- Parser first.\n"},
        )
        await c.call_tool(
            "send_message", {"text": "Done: summary added, decisions note created.", "priority": "high"}
        )
        end = await c.call_tool(
            "end_conversation",
            {
                "title": "Alpha plan: summary and decisions",
                "summary": "Added a Summary section to the alpha plan and created a decisions note, after the "
                "user agreed.",
            },
        )
        return str(end.structured_content["data"]["conversation"]["id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build the vault here and keep it")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="va-demo-"))
    vault = base / "vault"
    shutil.copytree(REPO / "fixtures" / "orientation", vault)
    before = (vault / "projects/alpha/plan.md").read_bytes()
    try:
        print("$ vault-agent index")
        run("index", vault=vault)
        print("agent session (stdio, mcp SDK client):")
        cid = asyncio.run(session(vault))
        for cmd in (
            ["conversations", "list"],
            ["conversations", "show", cid],
            ["messages"],
            ["conversations", "undo", cid],
            ["conversations", "undo", cid, "--apply"],
        ):
            print(f"\n$ vault-agent {' '.join(cmd)}")
            print(run(*cmd, vault=vault).rstrip())
        after = (vault / "projects/alpha/plan.md").read_bytes()
        created = (vault / "projects/alpha/decisions.md").exists()
        print(f"\nplan.md restored byte for byte: {after == before}; decisions.md still present: {created}")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
