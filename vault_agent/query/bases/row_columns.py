"""vault_query's typed columns of one snapshot, located by Bases row position (rows.py).

The columns (`columnar.Columns`, shared with vault_query) are built on first use: a listing
does not need them. From them: the props rows of one key in every segment (filters and sorts
read them), where each row position lies (segment, row), the frontmatter keys as written
(`row_layouts.FieldSpellings`), and a note's properties rebuilt from its props rows
(`LazyProperties`, on first access) under their names as written (`fm_fields`). Per-segment
props layouts are built once per segment and reader (`row_layouts.segment_layouts`), since
segments never change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vault_agent.property_values import canonical_key
from vault_agent.query.bases.row_layouts import (
    FieldSpellings,
    Ints,
    PropsLayout,
    attach,
    props_layout,
    scalar,
    segment_layouts,
)
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.structured import columnar
from vault_agent.query.structured.columnar import KINDS

MAX_KEYS = 64  # property keys whose rows a snapshot keeps located (filters and sorts read them)


class LazyProperties(Mapping[str, object]):
    """A note's frontmatter values, rebuilt from the props rows on first access."""

    __slots__ = ("_props", "_position", "_values")

    def __init__(
        self, props: PropertyColumns, position: int, store: dict[int, dict[str, object]] | None = None
    ) -> None:
        self._props = props
        self._position = position
        self._values: dict[str, object] | None = store.get(position) if store is not None else None

    def _get(self) -> dict[str, object]:
        if self._values is None:
            self._values = self._props.properties(self._position)
        return self._values

    def __getitem__(self, key: str) -> object:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, key: object) -> bool:
        return key in self._get()


class PropertyColumns:
    """The typed columns of a snapshot's live notes; row positions 0..n-1 as in `notes`."""

    def __init__(self, reader: SnapshotReader, view: SnapshotView, notes: pa.Table) -> None:
        self.reader = reader
        self.count = notes.num_rows
        # the view is kept for its manifest and live notes only (snapshot-wide, not its cursor)
        self._view = view
        self._notes = notes
        self._columns: columnar.Columns | None = None
        self._columns_built = False
        self._columns_lock = threading.Lock()
        self.segments = {cols.segment_id: cols for cols, _ in view.live.segment_views()}
        self._fm_vocab = view.live.vocab("fm_fields")
        self._segment_files = {s.segment_id: s.files for s in view.manifest.segments}
        self._segment_ids = [s.segment_id for s in view.manifest.segments]  # columns.segments' order
        self._where: tuple[npt.NDArray[np.int32], Ints] | None = None  # position → (segment idx, row)
        self._names = FieldSpellings(lambda: self.columns, self.segments, self._segment_ids, self._fm_vocab)
        self._key_rows: dict[str, list[tuple[columnar._Keyed, int, int, Ints]]] = {}
        self._lock = threading.Lock()

    @property
    def columns(self) -> columnar.Columns | None:
        """vault_query's columns of the snapshot (None when a segment's notes are not loaded)."""
        with self._columns_lock:
            if not self._columns_built:
                self._columns = columnar.columns_of(self.reader, self._view, self._notes)
                self._columns_built = True
            return self._columns

    def key_rows(self, key: str) -> list[tuple[columnar._Keyed, int, int, Ints]]:
        """vault_query's props rows of one canonical key in every segment, with each row's
        position in this snapshot (columnar's; kept for the snapshot's last MAX_KEYS keys)."""
        if self.columns is None:
            return []
        with self._lock:
            found = self._key_rows.get(key)
        if found is None:
            found = columnar._rows(self.columns, 0, key)
            with self._lock:
                self._key_rows[key] = found
                while len(self._key_rows) > MAX_KEYS:
                    del self._key_rows[next(iter(self._key_rows))]
        return found

    # ------------------------------------------------------------------ positions
    def locate(self, position: int) -> tuple[int, int] | None:
        """(index into columns.segments, the note's row in that segment) of a position."""
        columns = self.columns
        if columns is None:
            return None
        with self._lock:
            if self._where is None:
                seg = np.full(self.count, -1, np.int32)
                row = np.full(self.count, -1, np.int64)
                for i, (_, _, positions) in enumerate(columns.segments):
                    live = np.flatnonzero(positions >= 0)
                    seg[positions[live]] = i
                    row[positions[live]] = live
                self._where = (seg, row)
        seg_index, seg_row = int(self._where[0][position]), int(self._where[1][position])
        return (seg_index, seg_row) if seg_index >= 0 else None

    def segment_id_of(self, index: int) -> int:
        """The segment id of `columns.segments[index]` (the manifest's order)."""
        return self._segment_ids[index]

    # ------------------------------------------------------------------ field names
    def live_fields(self) -> tuple[npt.NDArray[np.int32], Ints] | None:
        """Every live note's frontmatter keys: (codes of the `fm_fields` vocab, positions)."""
        return self._names.live_fields()

    def spellings(self, canonical: str) -> list[tuple[int, str]]:
        """(code, key as written) of every frontmatter key of the snapshot folding to `canonical`."""
        return self._names.spellings(canonical)

    # ------------------------------------------------------------------ properties
    def _props_of_segment(self, index: int) -> tuple[columnar._Keyed, PropsLayout] | None:
        assert self.columns is not None
        keyed = self.columns.segments[index][0]
        if keyed is None:
            return None
        sid = self.segment_id_of(index)
        kept = segment_layouts.of(self.reader)
        with kept.lock:
            found = kept.props.get(sid)
            if found is None or found[0] is not keyed:
                rows = self.segments[sid].rows if sid in self.segments else int(keyed.row.max(initial=-1)) + 1
                found = kept.props[sid] = (keyed, props_layout(keyed, rows))
                for gone in [s for s in kept.props if s not in self._segment_files]:
                    del kept.props[gone]
        return keyed, found[1]

    def properties(self, position: int) -> dict[str, object]:
        """The note's frontmatter as plain values under its keys as written (module doc)."""
        return self.properties_many([position]).get(position, {})

    def properties_many(self, positions: list[int]) -> dict[int, dict[str, object]]:
        """`properties` of many notes at once (one gather per segment: a page, a batch)."""
        out: dict[int, dict[str, object]] = {p: {} for p in positions}
        by_segment: dict[int, list[tuple[int, int]]] = {}
        for position in positions:
            where = self.locate(position)
            if where is not None:
                by_segment.setdefault(where[0], []).append((position, where[1]))
        for index, items in by_segment.items():
            found = self._props_of_segment(index)
            if found is None:
                continue
            keyed, layout = found
            names = self._field_names_of(index, [row for _, row in items])
            slices = [layout.order[int(layout.starts[row]) : int(layout.starts[row + 1])] for _, row in items]
            chosen = np.concatenate(slices) if slices else np.zeros(0, np.int64)
            rows = _gathered(keyed.cols, layout, chosen)
            at = 0
            for (position, _), part, fields in zip(items, slices, names, strict=True):
                out[position] = _rebuild(rows, at, at + len(part), fields)
                at += len(part)
        return out

    def _field_names_of(self, index: int, rows: list[int]) -> list[list[str]]:
        cols = self.segments.get(self.segment_id_of(index))
        if cols is None:
            return [[] for _ in rows]
        flat = cols.lists["fm_fields"]
        wanted = np.asarray(rows, np.int64)
        lo = np.searchsorted(flat.rows, wanted, side="left").tolist()
        hi = np.searchsorted(flat.rows, wanted, side="right").tolist()
        return [[self._fm_vocab.name(int(c)) for c in flat.codes[a:b]] for a, b in zip(lo, hi, strict=True)]


def _gathered(cols: dict[str, Any], layout: PropsLayout, chosen: Ints) -> dict[str, list[Any]]:
    """The props rows `chosen` as plain lists (one gather per column)."""
    return {
        "key": [layout.key_names[k] for k in layout.key_of_row[chosen].tolist()],
        "kind": [KINDS[k] if k < len(KINDS) else "other" for k in cols["kind"][chosen].tolist()],
        "s": cols["s"].take(pa.array(chosen, pa.int64())).to_pylist() if len(chosen) else [],
        "n": np.where(cols["n_ok"][chosen], cols["n"][chosen], np.nan).tolist(),
        "n_ok": cols["n_ok"][chosen].tolist(),
        "b": cols["b"][chosen].tolist(),
        "b_ok": cols["b_ok"][chosen].tolist(),
        "is_list": cols["is_list"][chosen].tolist(),
    }


def _rebuild(rows: dict[str, list[Any]], start: int, end: int, fields: list[str]) -> dict[str, object]:
    """One note's values from its gathered rows start:end, under its keys as written."""
    by_key: dict[str, object] = {}
    for i in range(start, end):
        key, kind = rows["key"][i], rows["kind"][i]
        value = scalar(
            kind,
            rows["s"][i],
            rows["n"][i] if rows["n_ok"][i] else None,
            bool(rows["b"][i]) if rows["b_ok"][i] else None,
        )
        if rows["is_list"][i]:
            items = by_key.setdefault(key, [])
            if isinstance(items, list) and kind != "empty":
                items.append(value)
                attach(by_key, key, items)
            continue
        by_key[key] = value
        attach(by_key, key, value)
    names: dict[str, str] = {}
    for name in fields:
        names.setdefault(canonical_key(name), name)
    return {name: by_key[canonical] for canonical, name in names.items() if canonical in by_key}
