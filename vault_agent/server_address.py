"""Which server the CLI talks to for a vault: the one `serve` recorded in the state dir.

`vault-agent serve` writes `<index-dir>/server.json` (`{"url", "host", "port", "pid"}`) once
it listens, and removes it when it stops. A server-backed command without `--server`,
`VAULT_AGENT_SERVER` or `server.url` reads the record of its vault's state dir and uses it
while the recording process is alive; a record left by a process that died is ignored.
So two vaults served on two ports (or `--port 0`) each answer their own CLI, with no flag.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vault_agent.config import Settings

log = logging.getLogger("vault_agent.server")

RECORD_FILE = "server.json"
DEFAULT_SERVER = "http://127.0.0.1:8765"


def record_server(index_dir: Path, url: str, host: str, port: int) -> None:
    """Publish this process's address in the state dir (atomic replace; best effort)."""
    record = {"url": url, "host": host, "port": port, "pid": os.getpid()}
    target = Path(index_dir) / RECORD_FILE
    temp = target.with_name(f".{RECORD_FILE}.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps(record) + "\n", encoding="utf-8")
        os.replace(temp, target)
    except OSError as exc:  # a read-only state dir: the CLI then needs --server
        log.warning("server address not recorded in the state dir (%s)", type(exc).__name__)
        with contextlib.suppress(OSError):
            temp.unlink()


def forget_server(index_dir: Path) -> None:
    """Remove the record if this process wrote it (another server may have replaced it)."""
    target = Path(index_dir) / RECORD_FILE
    record = _read(target)
    if record is not None and record.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            target.unlink()


def _read(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's process
        return True
    return True


def recorded_server(index_dir: Path) -> str | None:
    """The URL a live `serve` of this state dir recorded, or None."""
    record = _read(Path(index_dir) / RECORD_FILE)
    if record is None or not _alive(record.get("pid")):
        return None
    url = record.get("url")
    return url if isinstance(url, str) and url.startswith("http://") else None


def server_url(settings: Settings) -> str:
    """The server of a CLI command: --server / VAULT_AGENT_SERVER / server.url, else the
    address recorded by the vault's `serve`, else http://127.0.0.1:8765."""
    return settings.server or recorded_server(settings.index_dir) or DEFAULT_SERVER
