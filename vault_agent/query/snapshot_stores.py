"""The loaded snapshots of one reader: their DuckDB generations and shared segment columns.

`SnapshotReader` (snapshot.py) decides which snapshot is current and which requests pin
which; this module loads a snapshot (`load`), binds its SQL views (`bind`), releases what
no loaded snapshot names any more (`release`: schemas, segment objects, segment columns,
and a whole generation once none of its snapshots is left), and moves the current snapshot
into a new generation when the old one's dead weight passed its budget (`fresh_store`,
then `adopt`; duck_store.py says why). Every method runs under the reader's `_ddl_lock`,
except `fresh_store`, which fills a store nobody else sees yet.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from vault_agent.contracts import Manifest
from vault_agent.heap import release_free_memory
from vault_agent.query.duck_store import DuckStore
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.snapshot_catalog import SnapshotCatalog


@dataclass(eq=False)
class LoadedSnap:
    """One loaded snapshot: its schema in its generation's database, and the requests that
    hold it (compared by identity: a generation change loads the same manifest again)."""

    manifest: Manifest
    schema: str
    segment_ids: tuple[int, ...]
    live: LiveNotes
    store: DuckStore
    refs: int = 0
    retired: bool = False
    bound: bool = False  # its schema of SQL views exists (DuckStore.bind)

    @property
    def snapshot_id(self) -> int:
        return self.manifest.snapshot_id


class SnapshotStores:
    """Generations of the reader's database (one current) and the columns they share."""

    def __init__(self, state_dir: Path, lock: threading.Lock) -> None:
        self._state_dir = state_dir
        self.catalog = SnapshotCatalog(state_dir, lock)
        self.current = DuckStore(state_dir)
        self._users: dict[DuckStore, int] = {self.current: 0}  # loaded snapshots per store

    def _track(self, snap: LoadedSnap) -> LoadedSnap:
        self._users[snap.store] = self._users.get(snap.store, 0) + 1
        return snap

    def load(self, manifest: Manifest) -> LoadedSnap:
        """Load a snapshot's segments into the current generation, and its live notes."""
        live = self.catalog.load_live(manifest, self.current)
        segs = tuple(seg.segment_id for seg in manifest.segments)
        return self._track(LoadedSnap(manifest, f"s{manifest.snapshot_id}", segs, live, self.current))

    @staticmethod
    def bind(snap: LoadedSnap) -> None:
        if not snap.bound:
            snap.store.bind(snap.manifest, snap.schema, snap.live)
            snap.bound = True

    def release(self, dropped: list[LoadedSnap], alive: list[LoadedSnap]) -> None:
        """Drop the `dropped` snapshots (no request holds them) from their generations:
        their schemas, segments none of `alive` names in that generation, the segment
        columns no snapshot names, and every old generation left without snapshots."""
        closed = False
        for store in {s.store: None for s in dropped}:
            mine = [s for s in alive if s.store is store]
            self._users[store] = self._users.get(store, 0) - sum(1 for s in dropped if s.store is store)
            if self._users[store] <= 0 and store is not self.current:
                del self._users[store]
                store.close()
                closed = True
                continue
            taken = {s.schema for s in mine}
            schemas = [s.schema for s in dropped if s.store is store and s.schema not in taken]
            store.drop(schemas, {sid for s in mine for sid in s.segment_ids})
        self.catalog.keep({sid for s in alive for sid in s.segment_ids})
        if closed:
            release_free_memory()  # a whole database's pages are free by now

    def due(self) -> bool:
        """Whether the current generation holds more dead weight than its budget."""
        return self.current.over_budget()

    def fresh_store(self, manifest: Manifest) -> DuckStore:
        """A new generation holding `manifest`'s segments (no lock: nobody sees it yet).

        Raises:
            IndexIncompatible: the manifest names an invalid file.
            OSError: a segment file cannot be read.
        """
        store = DuckStore(self._state_dir, self.current.generation + 1)
        try:
            for seg in manifest.segments:
                store.load_segment(seg.segment_id, seg.files, store.read_notes(seg.files))
        except BaseException:
            store.close()
            raise
        return store

    def adopt(self, store: DuckStore, snap: LoadedSnap) -> LoadedSnap:
        """Make `store` the current generation with `snap` (the reader's current snapshot)
        loaded and bound in it; returns that copy of `snap`."""
        self.catalog.load_into(snap.manifest, store)  # segments committed while it filled
        moved = LoadedSnap(snap.manifest, snap.schema, snap.segment_ids, snap.live, store)
        self.bind(moved)
        self._users.setdefault(store, 0)
        old, self.current = self.current, store
        if self._users.get(old, 0) <= 0:
            self._users.pop(old, None)
            old.close()
        return self._track(moved)

    def close(self) -> None:
        """Close every generation (the reader is closing)."""
        for store in [*self._users, self.current]:
            store.close()
        self._users.clear()
