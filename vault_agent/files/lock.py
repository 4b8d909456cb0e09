"""One write lock per vault: threads of this process and other vault-agent processes.

Read-modify-write tools (append, replace, edit) would lose updates if two callers read
the same old bytes; holding this lock from the read to the event append makes them
serial. A thread lock orders this process; an flock on `<index-dir>/files.lock` orders
processes (e.g. `serve --allow-writes` beside a stdio `mcp`). Editors do not take it:
`expected_sha256` and the pre-rename re-check cover them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from vault_agent.private_dir import make_state_dirs

LOCK_NAME = "files.lock"


class WriteLock:
    """Thread lock + advisory file lock; re-entrant use is not needed (one hold per tool call).

    One per `AppContext` (its `write_lock`); the file is opened on first hold."""

    def __init__(self, index_dir: Path) -> None:
        self._thread = threading.Lock()
        self._index_dir = index_dir
        self._fd: int | None = None

    def _file_fd(self) -> int | None:
        if self._fd is None:
            try:
                make_state_dirs(self._index_dir, self._index_dir)  # 0700; never at a vanished vault's path
                self._fd = os.open(
                    self._index_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600
                )
            except OSError:
                return None  # read-only state dir: threads of this process are still ordered
        return self._fd

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread:
            fd = self._file_fd()
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._thread:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
