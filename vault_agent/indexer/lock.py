"""The single-writer lock: an exclusive, non-blocking flock on `<index-dir>/writer.lock`.

Held for the writer's whole lifetime (`index`, `reindex`, `watch`, `serve --watch`). The
kernel drops a flock when its process dies, so a crashed writer never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from vault_agent.contracts import LOCK_FILE
from vault_agent.errors import IndexBusy
from vault_agent.lock_probe import lock_held
from vault_agent.private_dir import make_private_dir


class WriterLock:
    """Exclusive writer lock of one state dir; `acquire` raises IndexBusy when taken."""

    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock without waiting.

        Raises:
            IndexBusy: another process (or another handle in this one) holds it.
        """
        if self._fd is not None:
            return
        make_private_dir(self.path.parent)  # the state dir: 0700 whatever the umask
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise IndexBusy() from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        if self._fd is None:
            return
        from vault_agent.indexer.search_index import close_engine_writer

        close_engine_writer(self.path.parent)  # its background merges end with the lock
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def writer_lock_held(index_dir: Path) -> bool:
    """True when some writer currently holds the lock of this state dir (probe only)."""
    return lock_held(Path(index_dir) / LOCK_FILE)
