"""One value per owner object, made on first use and dropped with its owner (held weakly):
per-reader caches of modules that must not keep a closed reader alive."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerOwner(Generic[T]):
    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._items: weakref.WeakKeyDictionary[object, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, owner: object) -> T:
        """The owner's value (made now if it has none)."""
        with self._lock:
            item = self._items.get(owner)
            if item is None:
                item = self._items[owner] = self._make()
            return item

    def drop(self, owner: object) -> None:
        """Forget the owner's value (the next `of` makes a new one)."""
        with self._lock:
            self._items.pop(owner, None)
