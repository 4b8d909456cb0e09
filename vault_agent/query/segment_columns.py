"""Typed in-memory columns of one segment's `notes` rows, laid out for orientation.

Built once when a segment is loaded and shared by every snapshot that names the segment
(segments are immutable). Strings are interned in a reader-wide `Vocab` so that the codes
of all segments of a snapshot can be counted together with one `numpy.bincount`, and list
columns (tags, frontmatter field names, type/status values) are flattened into a code per
element plus the row it belongs to, so that a snapshot's tombstones are applied with one
boolean gather. Nothing here is a count: every aggregate is computed per request
(seed 000 forbids precomputed orientation tables).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.query.segment_headings import SegmentHeadings
from vault_agent.query.segment_names import SegmentNames

Codes = npt.NDArray[np.int32]

# The list columns orientation counts; each note holds a value at most once (parser rule).
LIST_COLUMNS: tuple[str, ...] = ("tags", "fm_fields", "type_values", "status_values")


class Vocab:
    """Append-only interning of strings to int32 codes, with their code-point sort ranks.

    One per reader and kind (folders, tags, ...). Codes are never reused, so an array of
    codes stays valid while the vocabulary grows; `ranks()` is recomputed only after new
    strings arrived (a sort of the distinct strings, not of the rows).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._codes: dict[str, int] = {}
        self._names: list[str] = []
        self._ranks: npt.NDArray[np.int64] = np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self._names)

    def code(self, name: str) -> int | None:
        return self._codes.get(name)

    def name(self, code: int) -> str:
        return self._names[code]

    def intern(self, names: list[str]) -> Codes:
        """The codes of `names` (new ones appended), as an int32 array in the same order."""
        with self._lock:
            out = np.empty(len(names), np.int32)
            for i, name in enumerate(names):
                code = self._codes.get(name)
                if code is None:
                    code = self._codes[name] = len(self._names)
                    self._names.append(name)
                out[i] = code
            return out

    def ranks(self) -> npt.NDArray[np.int64]:
        """Rank of every code in Unicode code point order of its string (Python's `sorted`,
        DuckDB's VARCHAR order), used as the tie-breaker of count-descending lists."""
        with self._lock:
            if len(self._ranks) != len(self._names):
                order = sorted(range(len(self._names)), key=self._names.__getitem__)
                ranks = np.empty(len(order), np.int64)
                ranks[np.asarray(order, np.int64)] = np.arange(len(order), dtype=np.int64)
                self._ranks = ranks
            return self._ranks


class FolderVocab(Vocab):
    """Folder paths ('' = the vault root, code 0) with every ancestor interned too, and
    each code's parent and depth, so folder trees are computed with array operations."""

    def __init__(self) -> None:
        super().__init__()
        self._parent: list[int] = []
        self._depth: list[int] = []
        self._arrays: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] = (np.zeros(0, np.int64),) * 2
        self.intern([""])

    def intern(self, names: list[str]) -> Codes:
        with self._lock:
            out = np.empty(len(names), np.int32)
            for i, name in enumerate(names):
                out[i] = self._intern_one(name)
            return out

    def _intern_one(self, name: str) -> int:
        code = self._codes.get(name)
        if code is not None:
            return code
        parent = self._intern_one(name.rpartition("/")[0]) if name else -1
        code = self._codes[name] = len(self._names)
        self._names.append(name)
        self._parent.append(parent)
        self._depth.append(0 if not name else name.count("/") + 1)
        return code

    def layout(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(parent, depth, rank) of every code so far (the root's parent is -1)."""
        ranks = self.ranks()
        with self._lock:
            n = len(ranks)
            if len(self._arrays[0]) != n:
                self._arrays = (np.asarray(self._parent[:n], np.int64), np.asarray(self._depth[:n], np.int64))
            return self._arrays[0], self._arrays[1], ranks


@dataclass(frozen=True)
class Vocabs:
    """The vocabularies of one reader: folders and each counted list column."""

    folders: FolderVocab
    lists: dict[str, Vocab]

    @staticmethod
    def new() -> Vocabs:
        return Vocabs(folders=FolderVocab(), lists={name: Vocab() for name in LIST_COLUMNS})


@dataclass(frozen=True)
class ListCodes:
    """One list column flattened: element codes and the row each element belongs to."""

    codes: Codes
    rows: Codes


@dataclass(frozen=True)
class NoteFields:
    """What a one-note lookup returns without a query: the row's identifying fields."""

    path: str
    folder: str
    title: str | None
    facets_json: str
    too_large: bool
    headings: SegmentHeadings  # the segment's headings (one-note reads)


@dataclass(frozen=True)
class SegmentColumns:
    """One segment's notes: path index, folder codes, chunk counts and flattened lists."""

    segment_id: int
    paths: tuple[str, ...]
    row_of: dict[str, int]
    folders: Codes
    chunk_counts: npt.NDArray[np.int64]
    lists: dict[str, ListCodes]
    headings: SegmentHeadings
    names: SegmentNames  # file names, titles, aliases (name resolution), built on first use
    _lookup: pa.Table  # title, folder, facets_json, too_large (for one-note reads)

    @property
    def rows(self) -> int:
        return len(self.paths)

    def fields(self, row: int) -> NoteFields:
        rec = self._lookup.slice(row, 1).to_pylist()[0]
        return NoteFields(
            path=self.paths[row],
            folder=rec["folder"],
            title=rec["title"],
            facets_json=rec["facets_json"],
            too_large=bool(rec["too_large"]),
            headings=self.headings,
        )


def _intern_array(vocab: Vocab, values: pa.Array) -> Codes:
    """Codes of a string array without nulls: intern the distinct strings, then gather."""
    encoded = pc.dictionary_encode(values)
    mapping = vocab.intern(encoded.dictionary.to_pylist())
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    return mapping[indices] if len(indices) else np.zeros(0, np.int32)


def _flatten(vocab: Vocab, column: pa.ChunkedArray | pa.Array) -> ListCodes:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = pc.list_flatten(array)
    rows = pc.list_parent_indices(array)
    keep = pc.is_valid(values)  # a null element is never counted (the SQL said IS NOT NULL)
    if not pc.all(keep).as_py():
        values, rows = pc.filter(values, keep), pc.filter(rows, keep)
    return ListCodes(
        codes=_intern_array(vocab, values),
        rows=np.asarray(rows.to_numpy(zero_copy_only=False), np.int32),
    )


def build_segment_columns(
    segment_id: int, notes: pa.Table, vocabs: Vocabs, headings: SegmentHeadings
) -> SegmentColumns:
    """Lay out one segment's notes table (one pass of vectorized Arrow work per column)."""
    paths = tuple(notes.column("path").to_pylist())
    folders = notes.column("folder").combine_chunks()
    return SegmentColumns(
        segment_id=segment_id,
        paths=paths,
        row_of={p: i for i, p in enumerate(paths)},
        folders=_intern_array(vocabs.folders, folders.fill_null("")),
        chunk_counts=np.asarray(
            notes.column("chunk_count").fill_null(0).to_numpy(zero_copy_only=False), np.int64
        ),
        lists={name: _flatten(vocabs.lists[name], notes.column(name)) for name in LIST_COLUMNS},
        headings=headings,
        names=SegmentNames(
            paths, notes.column("title").combine_chunks(), notes.column("aliases").combine_chunks()
        ),
        _lookup=notes.select(["title", "folder", "facets_json", "too_large"]),
    )
