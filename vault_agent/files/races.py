"""Concurrent changes to the vault during a write become `CONFLICT`, never `INTERNAL`.

Every write walks the vault descriptor-relative, so an editor (or sync client) that renames
or deletes a folder between the listing of a parent and the `openat` of a child makes the
OS answer ENOENT/ENOTDIR. Nothing has been written at that point (the atomic replace only
renames a durable temp file at its very end), so the caller can simply read again and retry.
"""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from vault_agent.errors import Conflict

F = TypeVar("F", bound=Callable[..., Any])

_RACE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ESTALE})


def race_safe(func: F) -> F:
    """Wrap a write operation so a vault changed under it answers `CONFLICT`.

    Raises:
        Conflict: a path component vanished or changed type while the call ran.
    """

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OSError as exc:
            if exc.errno not in _RACE_ERRNOS:
                raise
            raise Conflict(
                "the vault changed while this write ran (a file or folder was moved or deleted "
                "meanwhile); read the paths again and retry"
            ) from None

    return run  # type: ignore[return-value]
