"""Per-snapshot entries in a request cache, the older snapshots' dropped."""

from __future__ import annotations

from typing import Any

SNAPSHOTS_KEPT = 2  # the pinned snapshot and the one before it (requests may still hold it)


def remember(cache: dict[Any, Any], kind: str, snapshot_id: int, value: Any) -> None:
    """Store a per-snapshot cache entry and drop that kind's entries of older snapshots.

    A `serve --watch` commits a snapshot per save for months; without the drop every
    snapshot's entries would stay in the process forever.
    """
    cache[(kind, snapshot_id)] = value
    ids = sorted(k[1] for k in list(cache) if isinstance(k, tuple) and len(k) == 2 and k[0] == kind)
    for old in ids[:-SNAPSHOTS_KEPT]:
        cache.pop((kind, old), None)
