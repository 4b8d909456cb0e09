"""Per-segment layouts of the rows' data, and a note's frontmatter rebuilt from its props rows.

Segments never change, so each layout is built once per segment and reader (kept beside
vault_query's columns, dropped with the reader): a segment's `props` rows grouped by note
(`props_layout`), its links grouped by note in ordinal order (`links_layout`). `rebuild`
turns one note's props rows back into plain values (rows.py module doc).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.per_owner import PerOwner
from vault_agent.property_values import canonical_key
from vault_agent.query.segment_columns import SegmentColumns, Vocab
from vault_agent.query.structured import columnar

Ints = npt.NDArray[np.int64]
WIKILINK = re.compile(r"!?\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")


@dataclass
class PropsLayout:
    """One segment's props rows grouped by note row: rows order[starts[r]:starts[r+1]]."""

    order: Ints
    starts: Ints
    key_of_row: npt.NDArray[np.int32]
    key_names: list[str]


@dataclass
class LinksLayout:
    """One segment's links grouped by note row, in ordinal order."""

    starts: Ints
    targets: list[str]
    kinds: list[str]


@dataclass
class Layouts:
    lock: threading.Lock = field(default_factory=threading.Lock)
    props: dict[int, tuple[object, PropsLayout]] = field(default_factory=dict)
    links: dict[int, tuple[str, LinksLayout]] = field(default_factory=dict)


segment_layouts: PerOwner[Layouts] = PerOwner(Layouts)


def props_layout(keyed: columnar._Keyed, rows: int) -> PropsLayout:
    n = len(keyed.row)
    key_of_row = np.zeros(n, np.int32)
    names: list[str] = []
    for code, (key, (a, b)) in enumerate(keyed.slices.items()):
        key_of_row[a:b] = code
        names.append(key)
    note_row = keyed.row.astype(np.int64)
    order = np.lexsort((keyed.cols["item"], key_of_row, note_row)).astype(np.int64)
    sorted_rows = note_row[order]
    starts = np.searchsorted(sorted_rows, np.arange(rows + 1), side="left").astype(np.int64)
    return PropsLayout(order, starts, key_of_row, names)


def links_layout(file: Path | None, paths: tuple[str, ...]) -> LinksLayout:
    if file is None:
        return LinksLayout(np.zeros(len(paths) + 1, np.int64), [], [])
    table = pq.read_table(file, columns=["path", "ordinal", "target", "kind"])
    table = table.sort_by([("path", "ascending"), ("ordinal", "ascending")])
    index = pc.index_in(table["path"], value_set=pa.array(paths, pa.string())).fill_null(-1)
    source = np.asarray(index.to_numpy(zero_copy_only=False), np.int64)
    keep = source >= 0
    order = np.argsort(source[keep], kind="stable")
    kept = np.flatnonzero(keep)[order]
    source = source[kept]
    targets = table["target"].take(pa.array(kept)).fill_null("").to_pylist()
    kinds = table["kind"].take(pa.array(kept)).fill_null("").to_pylist()
    starts = np.searchsorted(source, np.arange(len(paths) + 1), side="left").astype(np.int64)
    return LinksLayout(starts, targets, kinds)


class FieldSpellings:
    """The snapshot's frontmatter keys as written: which notes hold which (`fm_fields`
    codes and positions, built once), and the spellings folding to one canonical name."""

    def __init__(
        self,
        columns: Callable[[], columnar.Columns | None],
        segments: dict[int, SegmentColumns],
        segment_ids: list[int],
        vocab: Vocab,
    ) -> None:
        self.columns = columns
        self.segments = segments
        self.segment_ids = segment_ids
        self.vocab = vocab
        self._lock = threading.Lock()
        self._fields: tuple[npt.NDArray[np.int32], Ints] | None = None
        self._spellings: dict[str, list[tuple[int, str]]] | None = None

    def live_fields(self) -> tuple[npt.NDArray[np.int32], Ints] | None:
        """Every live note's keys: (codes, positions), or None without columns."""
        columns = self.columns()
        if columns is None:
            return None
        with self._lock:
            if self._fields is None:
                codes: list[npt.NDArray[np.int32]] = []
                where: list[Ints] = []
                for i, (_, _, positions) in enumerate(columns.segments):
                    cols = self.segments.get(self.segment_ids[i])
                    if cols is None:
                        continue
                    flat = cols.lists["fm_fields"]
                    pos = positions[flat.rows] if len(flat.rows) else np.zeros(0, np.int64)
                    keep = pos >= 0
                    codes.append(flat.codes[keep])
                    where.append(pos[keep])
                self._fields = (
                    np.concatenate(codes) if codes else np.zeros(0, np.int32),
                    np.concatenate(where) if where else np.zeros(0, np.int64),
                )
            return self._fields

    def spellings(self, canonical: str) -> list[tuple[int, str]]:
        """(code, key as written) of every key folding to `canonical` (property_values)."""
        with self._lock:
            table = self._spellings
        if table is None:
            live = self.live_fields()
            table = {}
            if live is not None:
                for code in np.unique(live[0]).tolist():
                    name = self.vocab.name(int(code))
                    table.setdefault(canonical_key(name), []).append((int(code), name))
            with self._lock:
                self._spellings = table
        return table.get(canonical, [])


def scalar(kind: str, s: Any, n: Any, b: Any) -> object:
    if kind == "string":
        return s
    if kind == "number":
        return float(n) if n is not None else _special_number(s)
    if kind == "boolean":
        return bool(b)
    if kind == "date":
        try:
            return dt.date.fromisoformat(s)
        except (TypeError, ValueError):
            return s
    if kind == "datetime":
        try:
            return dt.datetime.fromisoformat(s)
        except (TypeError, ValueError):
            return s
    if kind in ("list", "empty"):
        return []
    if kind == "object":
        return {}
    return None


def _special_number(text: Any) -> object:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def attach(by_key: dict[str, object], key: str, value: object) -> None:
    """Put a `parent.child` value into its parent's map (maps are rebuilt from such rows)."""
    parent, dot, child = key.rpartition(".")
    if dot and isinstance(by_key.get(parent), dict):
        container = by_key[parent]
        assert isinstance(container, dict)
        container[child] = value


def wikilink_texts(values: Any) -> Iterator[str]:
    """The strings holding `[[…]]` among property values (lists and maps searched)."""
    stack = list(values)
    seen = 0
    while stack and seen < 10_000:
        seen += 1
        value = stack.pop(0)
        if isinstance(value, str):
            if "[[" in value:
                yield value
        elif isinstance(value, list):
            stack[:0] = value
        elif isinstance(value, dict):
            stack[:0] = list(value.values())
