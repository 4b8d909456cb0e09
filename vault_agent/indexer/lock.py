"""The single-writer lock: a flock on `<index-dir>/writer.lock`, plus a name no `rm` can free.

Held for the writer's whole lifetime (`index`, `reindex`, `watch`, `serve --watch`). The
kernel drops a flock when its process dies, so a crashed writer never leaves a stale lock.

A flock lives on a file, and deleting the state dir (`rm -rf .vault-agent`) unlinks that
file: a writer started afterwards would create a new lock file, lock it and run beside the
first one. So on Linux the lock is also an abstract Unix socket named after the state dir's
real path: such a name lives in no folder, deleting the state dir cannot free it, binding it
is exclusive, and the kernel frees it when the process dies, like the flock. `index` beside
a writer whose state dir was just deleted therefore answers INDEX_BUSY even before the
writer has noticed. The writer notices with `intact()` (its lock file has no name left, or
the path names another file) and locks a new file with `retake()`. Other systems have the
flock only (the writer re-takes it within a heartbeat).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import socket
import sys
from pathlib import Path

from vault_agent.contracts import LOCK_FILE
from vault_agent.errors import IndexBusy
from vault_agent.lock_probe import lock_held
from vault_agent.private_dir import make_private_dir, make_state_dirs

ABSTRACT_NAMES = sys.platform.startswith("linux")


def _abstract_name(index_dir: Path) -> bytes:
    digest = hashlib.sha256(os.path.realpath(index_dir).encode("utf-8", "surrogateescape")).hexdigest()
    return b"\0vault-agent-writer-" + digest[:32].encode()


def _bind_name(index_dir: Path) -> socket.socket | None:
    """Bind the state dir's abstract name (None off Linux).

    Raises:
        IndexBusy: another process (or handle) holds it.
    """
    if not ABSTRACT_NAMES:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(_abstract_name(index_dir))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise IndexBusy() from None
        raise
    return sock


class WriterLock:
    """Exclusive writer lock of one state dir; `acquire` raises IndexBusy when taken."""

    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / LOCK_FILE
        self._fd: int | None = None
        self._name: socket.socket | None = None

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
        name = _bind_name(self.path.parent)
        try:
            self._fd = self._lock_file()
        except BaseException:
            if name is not None:
                name.close()
            raise
        self._name = name

    def _lock_file(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise IndexBusy() from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def intact(self) -> bool:
        """True while the held lock file still has its name (cheap: one fstat, one stat)."""
        if self._fd is None:
            return True
        held = os.fstat(self._fd)
        if held.st_nlink == 0:
            return False
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)

    def retake(self) -> None:
        """After the lock file was deleted: recreate the state dir and lock a new file.

        Raises:
            IndexBusy: another process locked the new file first (possible only without
                abstract names); OSError: the state dir cannot be recreated.
        """
        if self._fd is None:
            raise RuntimeError("retake() of a lock that is not held")
        make_state_dirs(self.path.parent, self.path.parent)
        fd = self._lock_file()
        old, self._fd = self._fd, fd
        os.close(old)

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
        name, self._name = self._name, None
        if name is not None:
            name.close()

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _name_bound(index_dir: Path) -> bool:
    """Whether the state dir's abstract name is bound, read from /proc/net/unix: a probe
    that binds the name itself could make a writer starting at that instant fail."""
    if not ABSTRACT_NAMES:
        return False
    wanted = "@" + _abstract_name(index_dir)[1:].decode()
    try:
        with open("/proc/net/unix", encoding="ascii", errors="replace") as fh:
            return any(line.rstrip("\n").endswith(" " + wanted) for line in fh)
    except OSError:
        return False


def writer_lock_held(index_dir: Path) -> bool:
    """True when some writer currently holds the lock of this state dir (probe only)."""
    if _name_bound(Path(index_dir)):
        return True
    return lock_held(Path(index_dir) / LOCK_FILE)
