"""What a loaded snapshot is made of in memory: typed note columns, and its DuckDB objects.

Per segment, `SegmentColumns` (typed arrays for orientation, one-note lookups and name
resolution), built from the same Arrow table that fills the segment's DuckDB `notes` copy,
so the Parquet file is decoded once; per snapshot a `LiveNotes` over them. The DuckDB side
(tables, views, snapshot schemas) lives in a `DuckStore` (duck_store.py): one per
generation of the reader's database, while the columns here are shared by every generation.
Loading a snapshot whose segments are loaded already costs only its tombstones: views are
catalog entries, and no table is copied per snapshot.

A segment's columns stay while any loaded snapshot names it (`keep`), so every per-segment
object of the reader is released with its segment.

All methods run under the reader's `_ddl_lock` (catalog changes are serialized).
"""

from __future__ import annotations

import threading
from pathlib import Path

from vault_agent.contracts import Manifest
from vault_agent.query.duck_store import LOADED_TABLES, DuckStore
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.segment_columns import SegmentColumns, Vocabs, build_segment_columns
from vault_agent.query.segment_headings import SegmentHeadings

__all__ = ["LOADED_TABLES", "SnapshotCatalog"]


class SnapshotCatalog:
    """Segment columns (loaded once, shared across snapshots and store generations)."""

    def __init__(self, state_dir: Path, lock: threading.Lock) -> None:
        self._state_dir = state_dir
        self._lock = lock  # the reader's bookkeeping lock, for the maps read by drops
        self.vocabs = Vocabs.new()
        self._seg_columns: dict[int, SegmentColumns] = {}
        self._last_live: LiveNotes | None = None

    def segment_ids(self) -> set[int]:
        """Segments whose columns are loaded."""
        with self._lock:
            return set(self._seg_columns)

    def _load_segment(self, store: DuckStore, seg_id: int, files: dict[str, str]) -> SegmentColumns:
        """The segment's columns (built once), and its objects in `store` (once per store)."""
        with self._lock:
            known = self._seg_columns.get(seg_id)
        if known is not None and store.has(seg_id):
            return known
        notes = store.read_notes(files)
        store.load_segment(seg_id, files, notes)
        if known is not None:
            return known
        headings = SegmentHeadings(store.seg_file(files["headings"]) if "headings" in files else None)
        columns = build_segment_columns(seg_id, notes, self.vocabs, headings)
        with self._lock:
            self._seg_columns[seg_id] = columns
        return columns

    def load_live(self, manifest: Manifest, store: DuckStore) -> LiveNotes:
        """Load the segments a snapshot needs (DuckDB tables in `store`, typed columns) and
        its live notes; its SQL views come later (`DuckStore.bind`): a search or an
        orientation request needs none of them."""
        segs = [(self._load_segment(store, s.segment_id, s.files), s.deleted) for s in manifest.segments]
        live = LiveNotes.build(segs, self.vocabs, previous=self._last_live)
        self._last_live = live
        return live

    def load_into(self, manifest: Manifest, store: DuckStore) -> None:
        """A snapshot's segments into another store generation (their columns are known)."""
        for seg in manifest.segments:
            self._load_segment(store, seg.segment_id, seg.files)

    def keep(self, segments_in_use: set[int]) -> None:
        """Forget the columns of segments no loaded snapshot names."""
        with self._lock:
            for seg_id in [s for s in self._seg_columns if s not in segments_in_use]:
                del self._seg_columns[seg_id]
            if (
                self._last_live is not None
                and not {c.segment_id for c, _ in self._last_live.segment_views()} <= segments_in_use
            ):
                self._last_live = None  # it would keep dropped segments' columns alive
