"""Is an advisory file lock (flock) held by someone? A probe that never takes it for long."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def lock_held(path: Path) -> bool:
    """True when another open file holds an exclusive flock on `path` (False when the file is
    missing). The kernel drops a flock when its process dies, so "held" means "alive"."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
