"""The tasks of a snapshot as typed columns, loaded once per segment and shared.

A segment's `tasks` file is read once, when a task request first needs it, into numpy
columns (`SegmentTasks`): dates as day numbers (lang_columns' `MISSING`/`INVALID`, so the
plugin's date order is integer order), status symbols, tags, dependencies and ids as codes
of reader-wide vocabularies, the section's heading path as a code into the segment's own
list of them, and the texts (description, tags as written, recurrence …) as Arrow arrays.
Segments are immutable, so a snapshot that names a loaded segment reuses its columns.

Per snapshot (`TaskSnapshot`, kept for the two newest) only what the snapshot decides is
computed: which rows are live (their note's row is live in `view.live`), which pass the
global filter of its Tasks settings, each status symbol's type and name under those
settings, which ids belong to open tasks (for `blocked`/`blocking`), and the rank of every
live note's path. A request then evaluates its plan segment by segment over these arrays
(evaluate.py), so its cost depends on the tasks, not on how many commits came before.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.per_owner import PerOwner
from vault_agent.query.segment_columns import SegmentColumns, Vocab
from vault_agent.query.tasks.lang_ast import STATUS_TYPES
from vault_agent.query.tasks.lang_columns import EPOCH, INVALID, MISSING
from vault_agent.query.tasks.lang_order import natural_key
from vault_agent.query.tasks.packed import DayColumn, PackedTexts, SparseTexts
from vault_agent.task_settings import OPEN_TYPES, TaskSettings
from vault_agent.task_syntax import DATE_FIELDS, is_valid_date

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader, SnapshotView

Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int32]
KEEP_SNAPSHOTS = 2
_OPEN_CODES = sorted(STATUS_TYPES.index(t) for t in OPEN_TYPES)
NOTATIONS: tuple[str | None, ...] = (None, "emoji", "dataview", "mixed")


@dataclass
class Vocabs:
    """Reader-wide interning (codes stay valid while a vocabulary grows)."""

    symbols: Vocab = field(default_factory=Vocab)  # status symbols as written
    tags: Vocab = field(default_factory=Vocab)  # tags casefolded (NFC), no `#`
    ids: Vocab = field(default_factory=Vocab)  # task ids and the ids tasks depend on
    tag_texts: Vocab = field(default_factory=Vocab)  # tags as written, no `#`


@dataclass(frozen=True)
class Flat:
    """A list column flattened: the code of each element and the row it belongs to."""

    codes: Ints
    rows: Ints


@dataclass
class SegmentTasks:
    """One segment's tasks (module doc); row k is the file's row k, in (path, line) order."""

    segment_id: int
    size: int
    note_row: npt.NDArray[Any]  # the row of the task's note in the segment's notes (SegmentColumns order)
    line: Ints
    parent_line: Ints  # 0: none
    symbol: npt.NDArray[Any]  # code in Vocabs.symbols
    dates: dict[str, DayColumn]
    invalid_text: dict[tuple[str, int], str]  # (field, row) → the text of an invalid date
    priority: npt.NDArray[np.int8]
    recurring: Bools
    id_code: npt.NDArray[Any]  # -1: none
    deps: Flat  # ids this task depends on
    tags: Flat  # the task's own tags, casefolded codes
    tags_written: Ints  # the same tags as written (codes in Vocabs.tag_texts), element for element
    # The note's frontmatter tags (its inline tags are other tasks' or paragraphs': they do
    # not spread to every task of the note): the segment's own orientation columns
    # (segment_columns.SegmentColumns.lists["tags"], codes of the reader's tag vocabulary as
    # written), shared, not copied.
    note_tags: Flat
    heading: npt.NDArray[Any]  # code into heading_paths
    heading_paths: PackedTexts  # each distinct heading path, its texts joined by NUL ('' = none)
    note_paths: tuple[str, ...]  # by note row (the segment columns' own tuple, shared)
    description: PackedTexts  # as the file holds it
    notation: npt.NDArray[np.int8]  # index into NOTATIONS
    sparse: dict[str, SparseTexts]  # recurrence, on_completion (few rows hold one)
    _cache: dict[Any, Any] = field(default_factory=dict)  # derived arrays, built on first use

    def derived(self, key: Any, make: Any) -> Any:
        """A value derived from the segment's columns, computed once (thread-safe enough:
        two racing requests compute the same value)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def _days(column: pa.ChunkedArray, name: str, invalid: dict[tuple[str, int], str]) -> Ints:
    """Day numbers of a date column (absent MISSING, no calendar date INVALID), validated
    per distinct text (a segment holds a few hundred distinct dates)."""
    encoded = pc.dictionary_encode(column).combine_chunks()
    texts: list[str] = encoded.dictionary.to_pylist()
    table = np.array(
        [(dt.date.fromisoformat(t) - EPOCH).days if is_valid_date(t) else INVALID for t in texts] or [0],
        np.int64,
    )
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    days = np.where(codes >= 0, table[np.maximum(codes, 0)], MISSING).astype(np.int32)
    for row in np.flatnonzero(days == INVALID).tolist():
        invalid[(name, row)] = texts[codes[row]]
    return days


def _flatten(vocab: Vocab, column: pa.ChunkedArray | pa.Array, fold: bool) -> Flat:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = pc.list_flatten(array)
    rows = np.asarray(pc.list_parent_indices(array).to_numpy(zero_copy_only=False), np.int32)
    if fold:
        values = pc.utf8_lower(values)  # tags compare case-insensitively (NFC since the parser)
    return Flat(codes=_interned(vocab, values), rows=rows)


def _interned(vocab: Vocab, values: pa.Array) -> Ints:
    encoded = pc.dictionary_encode(values)
    mapping = vocab.intern([str(v) for v in encoded.dictionary.to_pylist()])
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    return mapping[indices] if len(indices) else np.zeros(0, np.int32)


def _codes(vocab: Vocab, column: pa.ChunkedArray, missing: int = -1) -> Ints:
    """Each row's code of its text in a vocabulary (`missing` for null)."""
    encoded = pc.dictionary_encode(column).combine_chunks()
    mapping = np.append(vocab.intern([str(v) for v in encoded.dictionary.to_pylist()]), np.int32(missing))
    indices = encoded.indices.fill_null(len(mapping) - 1).to_numpy(zero_copy_only=False)
    return np.asarray(mapping[indices], np.int32)


def _small(values: npt.NDArray[Any], bound: int) -> npt.NDArray[Any]:
    """Codes below `bound` in 16 bits when they fit (a segment's notes, sections, symbols)."""
    return values.astype(np.int16) if bound < 2**15 else values


def _small_ints(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Small non-negative or -1 values (line numbers, code lists) in 16 bits when they fit."""
    return _small(values, int(values.max(initial=0)) + 1)


# Read as dictionaries: a segment's paths, dates and notations repeat (decoded once each).
_DICTIONARY_COLUMNS = ["path", "status", "notation", "id", "section", *DATE_FIELDS]


def load_segment(file: str, columns: SegmentColumns, vocabs: Vocabs) -> SegmentTasks:
    """Read one segment's tasks file into columns (its notes' columns already loaded).

    The file is read a few columns at a time, each group dropped once held in its compact
    form: its whole table at once would pass through serve's allocator at several times the
    columns' final size, and the allocator keeps what it once held."""
    note_paths = columns.paths
    source = pq.ParquetFile(file, read_dictionary=_DICTIONARY_COLUMNS, pre_buffer=False)

    def read(*names: str) -> pa.Table:
        return source.read(columns=list(names), use_threads=False)

    table = read("path", "line", "parent_line", "status", "priority", "notation", "id", "depends_on")
    n = table.num_rows
    paths = table.column("path").combine_chunks()
    found = pc.index_in(paths.dictionary, value_set=pa.array(note_paths, pa.string())).fill_null(-1)
    path_rows = np.append(np.asarray(found.to_numpy(zero_copy_only=False), np.int32), np.int32(0))
    note_row = path_rows[paths.indices.to_numpy(zero_copy_only=False)] if n else np.zeros(0, np.int32)
    notation = pc.index_in(table.column("notation").cast(pa.string()), value_set=pa.array(NOTATIONS[1:]))
    line = _small_ints(np.asarray(table.column("line").to_numpy(), np.int32))
    parent_line = _small_ints(np.asarray(table.column("parent_line").fill_null(0).to_numpy(), np.int32))
    symbol = _small(_codes(vocabs.symbols, table.column("status")), len(vocabs.symbols))
    priority = np.asarray(table.column("priority").fill_null(3).to_numpy(), np.int8)
    id_code = _small(_codes(vocabs.ids, table.column("id")), len(vocabs.ids))
    deps = _flatten(vocabs.ids, table.column("depends_on"), fold=False)
    del table, paths
    invalid: dict[tuple[str, int], str] = {}
    table = read(*DATE_FIELDS)
    dates = {f: DayColumn.of(_days(table.column(f).cast(pa.string()), f, invalid)) for f in DATE_FIELDS}
    table = read("tags", "recurrence", "on_completion")
    written = table.column("tags").combine_chunks()
    tags = _flatten(vocabs.tags, written, fold=True)
    tags_written = _interned(vocabs.tag_texts, pc.list_flatten(written))
    recurring = np.asarray(pc.is_valid(table.column("recurrence")).to_numpy(zero_copy_only=False), np.bool_)
    sparse = {name: SparseTexts.of(table.column(name)) for name in ("recurrence", "on_completion")}
    del written
    headings = read("section").column("section").combine_chunks()
    heading = _small(headings.indices.fill_null(0).to_numpy(zero_copy_only=False), len(headings.dictionary))
    heading_paths = PackedTexts.pack(headings.dictionary)
    del headings
    table = read("description")
    description = PackedTexts.pack(table.column("description"))
    del table
    return SegmentTasks(
        segment_id=columns.segment_id,
        size=n,
        note_row=_small(np.asarray(note_row, np.int32), len(note_paths)),
        line=line,
        parent_line=parent_line,
        symbol=symbol,
        dates=dates,
        invalid_text=invalid,
        priority=priority,
        recurring=recurring,
        id_code=id_code,
        deps=deps,
        tags=tags,
        tags_written=tags_written,
        note_tags=Flat(codes=columns.lists["tags"].codes, rows=columns.lists["tags"].rows),
        heading=heading,
        heading_paths=heading_paths,
        note_paths=note_paths,
        description=description,
        notation=np.asarray(notation.fill_null(-1).to_numpy(zero_copy_only=False) + 1, np.int8),
        sparse=sparse,
    )


@dataclass
class SegmentView:
    """A segment's tasks in one snapshot: the rows that are tasks there, and per-row values
    that depend on the snapshot's settings."""

    tasks: SegmentTasks
    rows: npt.NDArray[np.int32]  # live rows that pass the global filter, in file order
    status_type: npt.NDArray[np.int8]  # per row of the segment: index into STATUS_TYPES
    path_rank: Ints  # per NOTE row of the segment: the rank of its path in the snapshot


@dataclass
class TaskSnapshot:
    """The tasks of one snapshot (module doc)."""

    snapshot_id: int
    settings: TaskSettings
    segments: list[SegmentView]
    status_names: dict[int, str]  # symbol code → the status's name under these settings
    open_ids: Bools  # per id code: some open task has this id
    open_deps: Bools  # per id code: some open task depends on this id
    counts: dict[dt.date, tuple[int, int]] = field(default_factory=dict)  # today → (open, overdue)

    @property
    def size(self) -> int:
        return sum(len(s.rows) for s in self.segments)


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    vocabs: Vocabs = field(default_factory=Vocabs)
    segments: dict[int, SegmentTasks] = field(default_factory=dict)
    snapshots: dict[int, TaskSnapshot] = field(default_factory=dict)


_caches: PerOwner[_Cache] = PerOwner(_Cache)


def vocabs_of(reader: SnapshotReader) -> Vocabs:
    """The reader's vocabularies (the codes of its segments' columns)."""
    return _caches.of(reader).vocabs


def _global_filter(tasks: SegmentTasks, gf: str) -> Bools:
    """The plugin's Task.fromLine: a line without the global filter text is no task."""
    if not gf:
        return np.ones(tasks.size, np.bool_)
    hit = pc.match_substring(tasks.description.array(), gf)
    return np.asarray(hit.fill_null(False).to_numpy(zero_copy_only=False), np.bool_)


def _path_keys(tasks: SegmentTasks) -> pa.Array:
    """The segment's note paths as sortable text in the plugin's path order (natural_key's
    primary part: case and accents folded, digit runs as numbers; paths equal under it keep
    the segment order), as Arrow text sorted in C++ by code point (kept packed: ~55 bytes a
    note plain, unpacked once a snapshot)."""
    return pa.array([natural_key(p)[0] for p in tasks.note_paths], pa.string())


def _path_ranks(views: list[tuple[SegmentTasks, Bools]]) -> list[Ints]:
    """Per segment, the rank of each note row's path among the snapshot's live paths, in
    the plugin's path order (`localeCompare` with numeric collation: lang_order)."""
    keys, owners, rows = [], [], []
    for k, (tasks, live_notes) in enumerate(views):
        live = np.flatnonzero(live_notes)
        packed = tasks.derived("path_keys", lambda t=tasks: PackedTexts.pack(_path_keys(t)))
        keys.append(packed.array().take(pa.array(live)))
        owners.append(np.full(len(live), k, np.int32))
        rows.append(live)
    ranks = [np.zeros(len(t.note_paths), np.int32) for t, _ in views]
    if not keys:
        return ranks
    order = pc.sort_indices(pa.chunked_array(keys, pa.string())).to_numpy()
    owner, row = np.concatenate(owners)[order], np.concatenate(rows)[order]
    for k in range(len(views)):
        mine = owner == k
        ranks[k][row[mine]] = np.flatnonzero(mine).astype(np.int32)
    return ranks


def _snapshot(cache: _Cache, view: SnapshotView, segs: list[tuple[SegmentTasks, Bools]]) -> TaskSnapshot:
    settings = view.manifest.task_settings
    vocab = cache.vocabs.symbols
    types = np.array(
        [STATUS_TYPES.index(settings.status(vocab.name(c)).type) for c in range(len(vocab))] or [0], np.int8
    )
    names = {c: settings.status(vocab.name(c)).name for c in range(len(vocab))}
    open_ids = np.zeros(len(cache.vocabs.ids) + 1, np.bool_)
    open_deps = np.zeros(len(cache.vocabs.ids) + 1, np.bool_)
    parts: list[SegmentView] = []
    ranks = _path_ranks(segs)
    for (tasks, live_notes), rank in zip(segs, ranks, strict=True):
        live = live_notes[tasks.note_row] & _global_filter(tasks, settings.global_filter)
        status_type = types[tasks.symbol]
        rows = np.flatnonzero(live).astype(np.int32)
        open_rows = rows[np.isin(status_type[rows], _OPEN_CODES)]
        ids = tasks.id_code[open_rows]
        open_ids[ids[ids >= 0]] = True
        is_open = np.zeros(tasks.size, np.bool_)
        is_open[open_rows] = True
        open_deps[tasks.deps.codes[is_open[tasks.deps.rows]]] = True
        parts.append(SegmentView(tasks=tasks, rows=rows, status_type=status_type, path_rank=rank))
    return TaskSnapshot(view.manifest.snapshot_id, settings, parts, names, open_ids, open_deps)


def task_snapshot(reader: SnapshotReader, view: SnapshotView) -> TaskSnapshot:
    """The pinned snapshot's tasks (segments loaded on first use; cached per snapshot)."""
    cache = _caches.of(reader)
    sid = view.manifest.snapshot_id
    with cache.lock:
        known = cache.snapshots.get(sid)
        if known is not None:
            return known
        seg_dir = Path(reader.settings.index_dir) / SEGMENTS_DIR
        files = {s.segment_id: s.files for s in view.manifest.segments}
        segs: list[tuple[SegmentTasks, Bools]] = []
        for columns, live in reversed(view.live.segment_views()):  # oldest first
            seg = columns.segment_id
            tasks = cache.segments.get(seg)
            if tasks is None:
                seg_files = files.get(seg, {})
                if "tasks" not in seg_files:
                    continue
                tasks = cache.segments[seg] = load_segment(
                    str(seg_dir / seg_files["tasks"]), columns, cache.vocabs
                )
            live_notes = np.ones(columns.rows, np.bool_) if live is None else live
            segs.append((tasks, live_notes))
        snap = _snapshot(cache, view, segs)
        cache.snapshots[sid] = snap
        for old in sorted(cache.snapshots)[:-KEEP_SNAPSHOTS]:
            del cache.snapshots[old]
        current = set(files)
        for gone in [s for s in cache.segments if s not in current]:
            del cache.segments[gone]
        return snap
