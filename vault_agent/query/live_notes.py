"""The live notes of one snapshot as typed arrays, and the aggregations orientation needs.

A snapshot names segments; a row of segment k is live unless k tombstones its path or a
newer segment of the snapshot holds the path (newest wins, as in the SQL views). Building
a `LiveNotes` reuses each segment's `SegmentColumns` (loaded once per segment) and only
applies this snapshot's tombstones: one boolean mask per segment that has dead rows, then
the live codes of every column concatenated into one array. Every count is computed per
request from these arrays (`numpy.bincount` over the live codes), so an answer always
comes from exactly the snapshot the request pinned, and its cost does not depend on how
many commits happened before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from vault_agent.query.segment_columns import (
    LIST_COLUMNS,
    Codes,
    FolderVocab,
    NoteFields,
    SegmentColumns,
    Vocab,
    Vocabs,
)

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class _Live:
    columns: SegmentColumns
    live: Mask | None  # None: every row of the segment is live


def _live(seg: _Live, values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    return values if seg.live is None else values[seg.live]


def _mask(rows: int, base: Mask | None, dead_rows: list[int]) -> Mask | None:
    """`base` (shared, never written) with `dead_rows` cleared; None means all live."""
    if not dead_rows:
        return base
    live = np.ones(rows, np.bool_) if base is None else base.copy()
    live[np.asarray(dead_rows, np.int64)] = False
    return live


def _from_scratch(segs: dict[int, tuple[SegmentColumns, frozenset[str]]]) -> list[_Live]:
    """Masks from the rule itself: own tombstones plus every path a newer segment holds."""
    held: set[str] = set()
    lives: list[_Live] = []
    for sid in sorted(segs, reverse=True):
        cols, tomb = segs[sid]
        dead = [cols.row_of[p] for p in tomb if p in cols.row_of]
        if held:  # iterate the smaller side
            if len(held) > cols.rows:
                dead += [row for p, row in cols.row_of.items() if p in held]
            else:
                dead += [cols.row_of[p] for p in held if p in cols.row_of]
        lives.append(_Live(cols, _mask(cols.rows, None, dead)))
        held.update(cols.paths)
    return lives


def _concat(parts: list[npt.NDArray[Any]], dtype: type[np.generic]) -> npt.NDArray[Any]:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


class LiveNotes:
    """Immutable per-snapshot view over segment columns (thread-safe to read)."""

    def __init__(self, segments: list[_Live], tombstones: dict[int, frozenset[str]], vocabs: Vocabs) -> None:
        self._vocabs = vocabs
        self._segments = tuple(sorted(segments, key=lambda s: s.columns.segment_id, reverse=True))
        self._tombstones = tombstones
        oldest_first = self._segments[::-1]
        self.folders: Codes = _concat([_live(s, s.columns.folders) for s in oldest_first], np.int32)
        self.chunk_counts = _concat([_live(s, s.columns.chunk_counts) for s in oldest_first], np.int64)
        self.lists: dict[str, Codes] = {}
        for name in LIST_COLUMNS:
            parts = []
            for s in oldest_first:
                flat = s.columns.lists[name]
                parts.append(flat.codes[s.live[flat.rows]] if s.live is not None else flat.codes)
            self.lists[name] = _concat(parts, np.int32)

    @staticmethod
    def build(
        segments: Iterable[tuple[SegmentColumns, Iterable[str]]],
        vocabs: Vocabs,
        previous: LiveNotes | None = None,
    ) -> LiveNotes:
        """The live notes of a snapshot: each segment's columns with its own tombstones.

        With `previous` (the last snapshot built by this reader) and a snapshot that only
        added newer segments and tombstones, the previous masks are reused and only the
        new segments' paths and the new tombstones are applied, so the cost of a commit
        is proportional to its change (plus one concatenation of the live codes).
        """
        segs = {cols.segment_id: (cols, frozenset(tomb)) for cols, tomb in segments}
        tombstones = {sid: tomb for sid, (_, tomb) in segs.items()}
        if previous is not None and previous._extends_to(segs):
            lives = previous._derive(segs)
        else:
            lives = _from_scratch(segs)
        return LiveNotes(lives, tombstones, vocabs)

    def _extends_to(self, segs: dict[int, tuple[SegmentColumns, frozenset[str]]]) -> bool:
        old = {s.columns.segment_id for s in self._segments}
        if not old or not old <= segs.keys():
            return False  # a segment was dropped (compaction): its rows' shadows changed
        newest = max(old)
        return all(sid > newest for sid in segs.keys() - old) and all(
            self._tombstones[sid] <= segs[sid][1] for sid in old
        )

    def _derive(self, segs: dict[int, tuple[SegmentColumns, frozenset[str]]]) -> list[_Live]:
        old_ids = {s.columns.segment_id for s in self._segments}
        new_ids = sorted(segs.keys() - old_ids, reverse=True)
        lives = [s for s in _from_scratch({sid: segs[sid] for sid in new_ids})]
        added_paths = [p for sid in new_ids for p in segs[sid][0].paths]
        for seg in self._segments:
            cols = seg.columns
            sid = cols.segment_id
            dead = [cols.row_of[p] for p in segs[sid][1] - self._tombstones[sid] if p in cols.row_of]
            dead += [cols.row_of[p] for p in added_paths if p in cols.row_of]
            lives.append(_Live(cols, _mask(cols.rows, seg.live, dead)))
        return lives

    # ------------------------------------------------------------------ one note
    def lookup(self, path: str) -> tuple[int, NoteFields] | None:
        """(segment id, fields) of the live note at exactly `path`, or None.

        The newest segment that holds a path decides: its row is live unless the segment
        tombstones it, and older segments' rows of that path are dead either way.
        """
        for seg in self._segments:
            row = seg.columns.row_of.get(path)
            if row is None:
                continue
            if seg.live is not None and not seg.live[row]:
                return None
            return seg.columns.segment_id, seg.columns.fields(row)
        return None

    def segment_views(self) -> tuple[tuple[SegmentColumns, Mask | None], ...]:
        """Every segment's columns with its live mask (None: all rows live), newest first."""
        return tuple((seg.columns, seg.live) for seg in self._segments)

    def vocab(self, column: str) -> Vocab:
        """The reader-wide vocabulary of a list column (codes of `SegmentColumns.lists`)."""
        return self._vocabs.lists[column]

    def dead_rows(self) -> list[tuple[int, str]]:
        """(segment id, path) of every row of the snapshot's segments that is not live."""
        out: list[tuple[int, str]] = []
        for seg in self._segments:
            if seg.live is not None:
                paths = seg.columns.paths
                out += [(seg.columns.segment_id, paths[i]) for i in np.flatnonzero(~seg.live)]
        return out

    # ------------------------------------------------------------------ aggregations
    @property
    def folder_vocab(self) -> FolderVocab:
        return self._vocabs.folders

    @property
    def note_count(self) -> int:
        return len(self.folders)

    def chunk_count(self) -> int:
        return int(self.chunk_counts.sum())

    def folder_counts(self) -> dict[str, int]:
        """Notes directly in each folder that holds any ('' = the root)."""
        counts = np.bincount(self.folders) if len(self.folders) else np.zeros(0, np.int64)
        vocab = self._vocabs.folders
        return {vocab.name(int(c)): int(counts[c]) for c in np.flatnonzero(counts)}

    def ranked(self, column: str, limit: int, skip_empty: bool) -> tuple[list[tuple[str, int]], bool]:
        """The `limit` most frequent values of a list column as (value, notes), count
        descending then value ascending by code point, and whether more exist."""
        vocab: Vocab = self._vocabs.lists[column]
        codes = self.lists[column]
        counts = np.bincount(codes) if len(codes) else np.zeros(0, np.int64)
        if skip_empty:
            empty = vocab.code("")
            if empty is not None and empty < len(counts):
                counts[empty] = 0
        present = np.flatnonzero(counts)
        ranks = vocab.ranks()
        order = np.lexsort((ranks[present], -counts[present]))[: limit + 1]
        top = present[order]
        items = [(vocab.name(int(c)), int(counts[c])) for c in top[:limit]]
        return items, len(present) > limit
