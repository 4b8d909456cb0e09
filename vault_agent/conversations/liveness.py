"""Which open conversations still have a live server: owner locks and open markers.

A process that records conversations holds an exclusive flock on
`conversations/owners/<token>.lock` for its whole life (the kernel drops it when the
process dies, however it dies) and keeps a marker `conversations/open/<id>` holding that
token for each conversation it has open. When `serve` or `mcp` starts, `close_orphans`
ends every marked conversation whose owner lock is free (`end_reason: "server stopped"`),
so a killed server leaves no conversation open for good. A lock file appears under its
final name only once locked, and a marker only after its owner's lock, so a process that
is starting is never taken for a dead one.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from vault_agent.conversations.digest import digest, end_line, last_activity
from vault_agent.conversations.lines import EndLine
from vault_agent.conversations.store import ConversationStore, valid_id
from vault_agent.errors import NotFound
from vault_agent.lock_probe import lock_held
from vault_agent.private_dir import FILE_MODE, make_state_dirs

log = logging.getLogger("vault_agent.conversations")

OWNERS, OPEN = "owners", "open"
SERVER_STOPPED = "server stopped"


def _token_ok(token: str) -> bool:
    return len(token) == 16 and all(c in "0123456789abcdef" for c in token)


class OwnerLock:
    """This process's claim on the conversations it opens (see the module docstring)."""

    def __init__(self, store_dir: Path) -> None:
        self.dir = store_dir
        self.token = secrets.token_hex(8)
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the owner lock (once); False when the state dir cannot be written."""
        if self._fd is not None:
            return True
        owners = self.dir / OWNERS
        try:
            make_state_dirs(owners, self.dir.parent)  # never at a vanished vault's path
            tmp = owners / f".{self.token}.tmp"
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.replace(tmp, owners / f"{self.token}.lock")
        except OSError as exc:
            log.warning(
                "conversation owner lock not taken (%s); a killed server's conversations stay open",
                type(exc).__name__,
            )
            return False
        self._fd = fd
        return True

    def mark_open(self, cid: str) -> None:
        """Mark `cid` as open and owned by this process (best effort)."""
        if not self.acquire():
            return
        folder = self.dir / OPEN
        try:
            make_state_dirs(folder, self.dir.parent)
            tmp = folder / f".{cid}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
            try:
                os.write(fd, self.token.encode("ascii"))
            finally:
                os.close(fd)
            os.replace(tmp, folder / cid)
        except OSError as exc:
            log.warning("conversation open marker not written (%s)", type(exc).__name__)

    def unmark(self, cid: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.dir / OPEN / cid)

    def release(self) -> None:
        """Drop the lock and its file (idempotent); markers are removed by their closers."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.unlink(self.dir / OWNERS / f"{self.token}.lock")
        os.close(fd)


def owner_alive(store_dir: Path, token: str) -> bool:
    """True while the process that wrote `token` holds its owner lock."""
    return _token_ok(token) and lock_held(store_dir / OWNERS / f"{token}.lock")


def _marker_token(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""


def close_orphans(store: ConversationStore, now: Callable[[], float]) -> list[str]:
    """End every marked conversation whose server is gone; returns their ids."""
    folder = store.dir / OPEN
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    closed: list[str] = []
    for cid in names:
        if not valid_id(cid) or owner_alive(store.dir, _marker_token(folder / cid)):
            continue
        try:
            lines = store.read(cid)
        except NotFound:
            lines = []
        if lines and end_line(lines) is None:
            title, summary = digest(lines)
            at = last_activity(lines) or now()
            line = EndLine(
                at=at, reason=SERVER_STOPPED, title=title, summary=summary, summary_source="digest"
            )
            store.append(cid, [line])
            closed.append(cid)
        with contextlib.suppress(OSError):
            os.unlink(folder / cid)
    _remove_dead_owner_files(store.dir)
    if closed:
        log.info("closed %d conversation(s) left open by a server that stopped", len(closed))
    return closed


def _remove_dead_owner_files(store_dir: Path) -> None:
    folder = store_dir / OWNERS
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        token = name.removesuffix(".lock")
        if name.endswith(".lock") and _token_ok(token) and not owner_alive(store_dir, token):
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
