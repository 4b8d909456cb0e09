"""What the renderers share: the `data` of a body, and suggested commands that run as printed."""

from __future__ import annotations

import shlex
from contextvars import ContextVar
from typing import Any

# The flags that point a suggested command at the vault and server of the command that
# printed it, as the user typed them (`--vault`, `--index-dir`, `--server`; never `--token`):
# set by the CLI around rendering (cli/request.py), empty elsewhere.
CONNECTION_FLAGS: ContextVar[tuple[str, ...]] = ContextVar("vault_agent_connection_flags", default=())
# The parameters of the request being rendered (a read's path is not in its answer).
REQUEST_PARAMS: ContextVar[dict[str, Any] | None] = ContextVar("vault_agent_request_params", default=None)


def data_of(body: Any) -> dict[str, Any]:
    """The `data` object of a response body (the body itself for raw contracts), for renderers."""
    data = body.get("data", body) if isinstance(body, dict) else {}
    return data if isinstance(data, dict) else {}


def command(*argv: str | int) -> str:
    """A suggested `vault-agent` command line, shell-quoted so that it runs by copy-paste."""
    return shlex.join(["vault-agent", *(str(a) for a in argv), *CONNECTION_FLAGS.get()])
