"""Make several files and directories durable in one round instead of one after another.

A commit must have its segment files, the engine's frozen dir and the manifest durable
before CURRENT is replaced; none of those fsyncs depends on another. Issued together, they
share the file system's journal commits (ext4's jbd2 batches concurrent fsyncs), so under
I/O contention the commit waits about once instead of once per file. The threads are
short-lived (one per path, joined here): a pool kept alive would make the parse pool's
fork unsafe (parse_pool._pool forks only while the process has a single thread).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["fsync_paths"]


def _fsync(path: Path, errors: list[OSError]) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        errors.append(exc)


def fsync_paths(paths: Iterable[Path]) -> None:
    """fsync every path (files and directories alike) concurrently; return when all are done.

    Raises:
        OSError: the first failure (ENOSPC, EIO, ...), after every fsync has finished.
    """
    todo = list(dict.fromkeys(Path(p) for p in paths))
    errors: list[OSError] = []
    threads = [threading.Thread(target=_fsync, args=(p, errors), daemon=True) for p in todo[1:]]
    for t in threads:
        t.start()
    if todo:
        _fsync(todo[0], errors)
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
