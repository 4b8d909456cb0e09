"""One value per owner object, made on first use and dropped with its owner (held weakly):
per-reader caches of modules that must not keep a closed reader alive.

A cache whose entries belong to snapshots and segments declares how to forget them
(`forget`); the snapshot reader calls `forget_released(reader, snapshots, segments)` whenever
it drops snapshots, so every such cache lets go of a segment when the reader does, not when
the cache happens to be used again (issue 32: caches keyed by segment, released with it).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

Forget = Callable[[T, set[int], set[int]], None]  # (value, snapshots held, segments held)
_SCOPED: list[PerOwner[Any]] = []  # the instances that declared `forget`


class PerOwner(Generic[T]):
    def __init__(self, make: Callable[[], T], forget: Forget[T] | None = None) -> None:
        self._make = make
        self._forget = forget
        self._items: weakref.WeakKeyDictionary[object, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        if forget is not None:
            _SCOPED.append(self)

    def of(self, owner: object) -> T:
        """The owner's value (made now if it has none)."""
        with self._lock:
            item = self._items.get(owner)
            if item is None:
                item = self._items[owner] = self._make()
            return item

    def get(self, owner: object) -> T | None:
        """The owner's value if it has one (nothing is made)."""
        with self._lock:
            return self._items.get(owner)

    def drop(self, owner: object) -> None:
        """Forget the owner's value (the next `of` makes a new one)."""
        with self._lock:
            self._items.pop(owner, None)

    def _released(self, owner: object, snapshots: set[int], segments: set[int]) -> None:
        with self._lock:
            item = self._items.get(owner)
        if item is not None and self._forget is not None:
            self._forget(item, snapshots, segments)


def forget_released(owner: object, snapshots: set[int], segments: set[int]) -> None:
    """Tell every per-owner cache of `owner` which snapshots and segments it still holds."""
    for scoped in list(_SCOPED):
        scoped._released(owner, snapshots, segments)
