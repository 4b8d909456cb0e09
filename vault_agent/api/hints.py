"""Surface-specific hints in error messages: one rewrite instead of per-handler copies.

Core code writes what to do next in CLI words ("check the path with 'tree' or 'search'",
"run 'vault-agent index'"), which fit the CLI and the HTTP API it calls. An MCP client
cannot run a command: `mcp_message` names the MCP tool for every quoted operation and turns
"run 'vault-agent …'" into a step for the user. A few core messages name an MCP tool
("read it with vault_read"); on the CLI `cli_message` names the command instead. The codes
never change, only the words. The names come from the catalog a transport serves: the MCP
server and the HTTP app (for the CLI, which calls through it) each build one `Hints`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from vault_agent.api.operation import Operation
from vault_agent.errors import VaultAgentError

# Only after a verb or a conjunction, so a quoted path that happens to be named "tree" stays.
_QUOTED = re.compile(r"\b(run|use|with|or|and) '([a-z][a-z-]*)'")
_COMMAND = re.compile(r"\brun '(vault-agent [^']+)'")


class Hints:
    """Error messages reworded for MCP callers or for the CLI, by the operations' names."""

    def __init__(self, operations: Iterable[Operation]) -> None:
        self._tools = {op.name: op.mcp_name for op in operations if not op.mcp_only}
        self._commands = {mcp: name for name, mcp in self._tools.items()}
        # Tools named like their command ("search", "related") are words, not names to replace.
        renamed = sorted((m for n, m in self._tools.items() if m != n), key=len, reverse=True)
        self._tool_pattern = (
            re.compile(r"\b(" + "|".join(map(re.escape, renamed)) + r")\b") if renamed else None
        )

    def cli_message(self, message: str) -> str:
        """An error message with MCP tool names replaced by the CLI command (`'vault-agent read'`)."""
        if self._tool_pattern is None:
            return message
        return self._tool_pattern.sub(lambda m: f"'vault-agent {self._commands[m.group(1)]}'", message)

    def for_cli(self, exc: VaultAgentError) -> VaultAgentError:
        """The error with its message in CLI words (itself when nothing changes)."""
        message = self.cli_message(exc.message)
        return exc if message == exc.message else type(exc)(message)

    def mcp_message(self, message: str) -> str:
        """An error message with CLI words replaced by what an MCP client can do."""

        def tool(match: re.Match[str]) -> str:
            verb, name = match.group(1), match.group(2)
            if name not in self._tools:
                return match.group(0)
            lead = "call " if verb in ("run", "use") else f"{verb} "
            return f"{lead}{self._tools[name]}"

        message = _COMMAND.sub(lambda m: f"ask the user to run '{m.group(1)}'", message)
        return _QUOTED.sub(tool, message)

    def for_mcp(self, body: dict[str, Any]) -> dict[str, Any]:
        """The canonical error object with its message worded for MCP callers."""
        error = dict(body.get("error", {}))
        if isinstance(error.get("message"), str):
            error["message"] = self.mcp_message(error["message"])
        return {**body, "error": error}
