"""Surface-specific hints in error messages: one rewrite instead of per-handler copies.

Core code writes what to do next in CLI words ("check the path with 'tree' or 'search'",
"run 'vault-agent index'"), which fit the CLI and the HTTP API it calls. An MCP client
cannot run a command: `for_mcp` names the MCP tool for every quoted operation and turns
"run 'vault-agent …'" into a step for the user. A few core messages name an MCP tool
("read it with vault_read"); on the CLI `cli_message` names the command instead. The codes
never change, only the words.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from vault_agent.api.registry import operations

# Only after a verb or a conjunction, so a quoted path that happens to be named "tree" stays.
_QUOTED = re.compile(r"\b(run|use|with|or|and) '([a-z][a-z-]*)'")
_COMMAND = re.compile(r"\brun '(vault-agent [^']+)'")


@cache
def _mcp_names() -> dict[str, str]:
    return {op.name: op.mcp_name for op in operations() if not op.mcp_only}


@cache
def _mcp_tool_pattern() -> re.Pattern[str]:
    # Tools named like their command ("search", "related") are words, not names to replace.
    names = sorted((m for n, m in _mcp_names().items() if m != n), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")


def cli_message(message: str) -> str:
    """An error message with MCP tool names replaced by the CLI command (`'vault-agent read'`)."""
    commands = {mcp: name for name, mcp in _mcp_names().items()}
    return _mcp_tool_pattern().sub(lambda m: f"'vault-agent {commands[m.group(1)]}'", message)


def mcp_message(message: str) -> str:
    """An error message with CLI words replaced by what an MCP client can do."""
    names = _mcp_names()

    def tool(match: re.Match[str]) -> str:
        verb, name = match.group(1), match.group(2)
        if name not in names:
            return match.group(0)
        lead = "call " if verb in ("run", "use") else f"{verb} "
        return f"{lead}{names[name]}"

    message = _COMMAND.sub(lambda m: f"ask the user to run '{m.group(1)}'", message)
    return _QUOTED.sub(tool, message)


def for_mcp(body: dict[str, Any]) -> dict[str, Any]:
    """The canonical error object with its message worded for MCP callers."""
    error = dict(body.get("error", {}))
    if isinstance(error.get("message"), str):
        error["message"] = mcp_message(error["message"])
    return {**body, "error": error}
