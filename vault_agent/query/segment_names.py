"""One segment's notes by name (file name, title, alias), for name resolution (names.py).

Built on the first lookup that needs the segment (segments are immutable, so it is built
once and shared by every snapshot naming the segment, like its `SegmentColumns`). Each
kind of name is a sorted array of 64-bit hashes of `name_key`s with the row each came from:
a lookup is a binary search, then the few candidate rows are checked against their real
names (a hash collision never answers). About 36 bytes per note for the three kinds,
instead of the ~300 of Python dicts keyed by the strings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vault_agent.names import name_key


def file_stem(path: str) -> str:
    """A note's file name without its extension (every indexed path ends with one)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


class _Keys:
    """Sorted hashes of keys and the row of each; several keys may share a row."""

    def __init__(self, keys: list[str], rows: list[int]) -> None:
        hashes = np.fromiter((hash(k) for k in keys), np.int64, len(keys))
        order = np.argsort(hashes, kind="stable")
        self.hashes: npt.NDArray[np.int64] = hashes[order]
        self.rows: npt.NDArray[np.int32] = np.asarray(rows, np.int32)[order]

    def rows_of(self, key: str) -> list[int]:
        h = hash(key)
        lo = int(np.searchsorted(self.hashes, h, "left"))
        hi = int(np.searchsorted(self.hashes, h, "right"))
        return [int(r) for r in self.rows[lo:hi]]


class SegmentNames:
    """File names, titles and aliases of one segment's notes (built on first use, thread-safe)."""

    def __init__(self, paths: tuple[str, ...], titles: pa.Array, aliases: pa.Array) -> None:
        self._paths = paths
        self._titles = titles
        self._aliases = aliases
        self._lock = threading.Lock()
        self._built: tuple[_Keys, _Keys, _Keys] | None = None

    def _keys(self) -> tuple[_Keys, _Keys, _Keys]:
        with self._lock:
            if self._built is None:
                stems = [name_key(file_stem(p)) for p in self._paths]
                titles = self._titles.to_pylist()
                title_rows = [i for i, t in enumerate(titles) if t]
                alias_keys: list[str] = []
                alias_rows: list[int] = []
                for row, values in enumerate(self._aliases.to_pylist()):
                    for value in values or ():
                        if value:
                            alias_keys.append(name_key(value))
                            alias_rows.append(row)
                self._built = (
                    _Keys(stems, list(range(len(stems)))),
                    _Keys([name_key(titles[i]) for i in title_rows], title_rows),
                    _Keys(alias_keys, alias_rows),
                )
            return self._built

    def _matching(self, index: int, key: str, check: Callable[[int], bool]) -> list[int]:
        return [row for row in self._keys()[index].rows_of(key) if check(row)]

    def by_name(self, key: str) -> list[int]:
        """Rows whose file name without extension has this name_key."""
        return self._matching(0, key, lambda row: name_key(file_stem(self._paths[row])) == key)

    def by_title(self, key: str) -> list[int]:
        return self._matching(1, key, lambda row: name_key(self._titles[row].as_py() or "") == key)

    def by_alias(self, key: str) -> list[int]:
        return sorted(
            set(
                self._matching(
                    2,
                    key,
                    lambda row: any(name_key(a or "") == key for a in self._aliases[row].as_py() or ()),
                )
            )
        )

    def title(self, row: int) -> str | None:
        value = self._titles[row].as_py()
        return value if isinstance(value, str) else None

    def aliases(self, row: int) -> list[str]:
        return [a for a in self._aliases[row].as_py() or () if isinstance(a, str)]
