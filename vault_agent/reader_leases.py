"""Reader leases: which snapshots the readers of a state dir hold, so that GC keeps their files.

Every snapshot reader (`query.snapshot.SnapshotReader`, in any process) keeps one lease file,
`<index-dir>/readers/<pid>-<n>.json`, holding `{"pid": P, "snapshots": [ids]}`: the
snapshots it has loaded or is loading (requests answer from them). It is rewritten
(atomically, not durably) whenever that set changes, about once per commit under edits,
and removed when the reader closes. The garbage collector (`indexer.snapshot`) keeps every
file a leased snapshot names and deletes the others after a short grace, instead of
keeping every superseded file for minutes in case some reader still used it; a lease whose
process is gone is ignored and removed. Any other program reading the snapshot files (a
plain DuckDB session, docs/indexer.md) may write a lease the same way to hold a snapshot
longer than the grace.

A reader that cannot write its lease (a read-only state dir) is protected by the grace only.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import threading
from pathlib import Path

from vault_agent.private_dir import make_state_dirs

READERS_DIR = "readers"
_counter = itertools.count(1)


class ReaderLease:
    """The lease file of one reader (thread-safe)."""

    def __init__(self, index_dir: Path) -> None:
        self._index_dir = Path(index_dir)
        self.path = self._index_dir / READERS_DIR / f"{os.getpid()}-{next(_counter)}.json"
        self._lock = threading.Lock()
        self._held: frozenset[int] | None = None

    def hold(self, snapshot_ids: set[int]) -> None:
        """Publish the snapshots this reader holds now (nothing written when unchanged)."""
        ids = frozenset(snapshot_ids)
        with self._lock:
            if ids == self._held:
                return
            self._held = ids
            if not self._index_dir.is_dir():
                return  # the state dir is gone: a lease never brings it back
            data = json.dumps({"pid": os.getpid(), "snapshots": sorted(ids)}).encode()
            tmp = self.path.with_name(f".{self.path.name}.tmp")
            try:
                make_state_dirs(self.path.parent, self._index_dir)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
                os.replace(tmp, self.path)
            except OSError:  # read-only or full: the grace protects this reader instead
                self._held = None

    def close(self) -> None:
        """Remove the lease (idempotent)."""
        with self._lock:
            self._held = frozenset()
            with contextlib.suppress(OSError):
                self.path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def leased_snapshots(index_dir: Path) -> set[int]:
    """Every snapshot id a live reader holds; leases of processes that are gone are removed."""
    folder = Path(index_dir) / READERS_DIR
    try:
        names = os.listdir(folder)
    except OSError:
        return set()
    held: set[int] = set()
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            lease = json.loads((folder / name).read_bytes())
            pid, ids = int(lease["pid"]), [int(i) for i in lease["snapshots"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being replaced, or not a lease
        if _alive(pid):
            held.update(ids)
        else:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
    return held
