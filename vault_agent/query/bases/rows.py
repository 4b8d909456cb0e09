"""The notes of one pinned snapshot as Bases rows: a `FileInfo` per note, built on demand.

Rows are the snapshot's live notes (Bases lists every file of the vault; vault-agent
indexes notes, so attachments are not rows: docs/bases.md). Everything comes from the
snapshot, never from the disk:

- path, size, mtime, ctime and tags (frontmatter and inline, `#`-prefixed) from the live
  notes table vault_query reads (`relations.live_notes`);
- properties from the typed `props` rows (`columnar.Columns`, shared with vault_query),
  rebuilt per note on first access (`LazyProperties`) under their names as written
  (`fm_fields`): strings, numbers, booleans, dates (`date`), date-times (`datetime`),
  null, lists and maps. The index keeps 100 items of a list, maps 3 levels deep, lists in
  lists empty and 256 values per note (docs/query.md); a note past those bounds shows what
  was kept;
- links and embeds (body: the `links` table; frontmatter: wikilink strings of its
  properties) with the vault path each resolves to (`linkpaths`, Obsidian's rules), only
  when an expression of the view reads them (`Needs`);
- backlinks: every note whose links resolve to the path, from one pass over the
  snapshot's links (built once per snapshot, on first use).

Per-segment layouts (props grouped by note, links by note) are built once per segment and
reader, since segments never change; a snapshot maps its live rows onto them.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.contracts import SEGMENTS_DIR, BaseFileRef
from vault_agent.linkpaths import LinkResolver
from vault_agent.property_values import canonical_key
from vault_agent.query.bases.row_layouts import (
    WIKILINK,
    FieldSpellings,
    Ints,
    LinksLayout,
    PropsLayout,
    attach,
    links_layout,
    props_layout,
    scalar,
    segment_layouts,
    wikilink_texts,
)
from vault_agent.query.bases.values import FileInfo, LinkRef
from vault_agent.query.related import path_index
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.structured import columnar
from vault_agent.query.structured.columnar import KINDS
from vault_agent.query.structured.relations import dead_by_segment, live_notes


@dataclass(frozen=True)
class Needs:
    """What the view's expressions read beyond the cheap fields (see views.needs_of)."""

    links: bool = False
    tags: bool = True


class LazyProperties(Mapping[str, object]):
    """A note's frontmatter values, rebuilt from the props rows on first access."""

    __slots__ = ("_rows", "_position", "_values")

    def __init__(
        self, rows: SnapshotRows, position: int, store: dict[int, dict[str, object]] | None = None
    ) -> None:
        self._rows = rows
        self._position = position
        self._values: dict[str, object] | None = store.get(position) if store is not None else None

    def _get(self) -> dict[str, object]:
        if self._values is None:
            self._values = self._rows.properties(self._position)
        return self._values

    def __getitem__(self, key: str) -> object:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, key: object) -> bool:
        return key in self._get()


def _micros_to_local(ns: int | None) -> dt.datetime | None:
    if ns is None:
        return None
    return dt.datetime.fromtimestamp(ns / 1e9).replace(microsecond=(ns // 1000) % 1_000_000)


MAX_KEYS = 64  # property keys whose rows a snapshot keeps located (filters and sorts read them)


class SnapshotRows:
    """The snapshot's notes for Bases: positions 0..n-1 in the live notes table."""

    def __init__(self, reader: SnapshotReader, view: SnapshotView, cache: dict[Any, Any] | None) -> None:
        self.reader = reader
        self.snapshot_id = view.manifest.snapshot_id
        self.index_dir = Path(reader.settings.index_dir)
        self.notes = live_notes(reader, view, dead_by_segment(view))
        self.count = self.notes.num_rows
        self.paths: list[str] = self.notes["path"].to_pylist()
        self.position = {p: i for i, p in enumerate(self.paths)}
        # vault_query's typed columns, built on first use (a listing does not need them); the
        # view is kept for its manifest and live notes only (snapshot-wide, not its cursor)
        self._view = view
        self._columns: columnar.Columns | None = None
        self._columns_built = False
        self._columns_lock = threading.Lock()
        self.resolver: LinkResolver = path_index(view, cache)
        self.bases: dict[str, BaseFileRef] = {ref.path: ref for ref in view.manifest.bases}
        self._base_resolver = LinkResolver(sorted(self.bases))
        self._segments = {cols.segment_id: cols for cols, _ in view.live.segment_views()}
        self._fm_vocab = view.live.vocab("fm_fields")
        self._segment_files = {s.segment_id: s.files for s in view.manifest.segments}
        self._segment_ids = [s.segment_id for s in view.manifest.segments]  # columns.segments' order
        self._where: tuple[npt.NDArray[np.int32], Ints] | None = None  # position → (segment idx, row)
        self._backlinks: dict[str, list[str]] | None = None
        self._names = FieldSpellings(lambda: self.columns, self._segments, self._segment_ids, self._fm_vocab)
        self._path_rank: Ints | None = None
        self._key_rows: dict[str, list[tuple[columnar._Keyed, int, int, Ints]]] = {}
        self._lock = threading.Lock()

    @property
    def columns(self) -> columnar.Columns | None:
        """vault_query's columns of the snapshot (None when a segment's notes are not loaded)."""
        with self._columns_lock:
            if not self._columns_built:
                self._columns = columnar.columns_of(self.reader, self._view, self.notes)
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

    def path_rank(self) -> Ints:
        """Each note's rank in code-point order of paths (the last sort key of every view)."""
        with self._lock:
            if self._path_rank is None:
                order = np.asarray(pc.sort_indices(self.notes["path"]).to_numpy(), np.int64)
                rank = np.empty(self.count, np.int64)
                rank[order] = np.arange(self.count, dtype=np.int64)
                self._path_rank = rank
            return self._path_rank

    # ------------------------------------------------------------------ positions
    def _locate(self, position: int) -> tuple[int, int] | None:
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
                rows = (
                    self._segments[sid].rows if sid in self._segments else int(keyed.row.max(initial=-1)) + 1
                )
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
            where = self._locate(position)
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
        cols = self._segments.get(self.segment_id_of(index))
        if cols is None:
            return [[] for _ in rows]
        flat = cols.lists["fm_fields"]
        wanted = np.asarray(rows, np.int64)
        lo = np.searchsorted(flat.rows, wanted, side="left").tolist()
        hi = np.searchsorted(flat.rows, wanted, side="right").tolist()
        return [[self._fm_vocab.name(int(c)) for c in flat.codes[a:b]] for a, b in zip(lo, hi, strict=True)]

    # ------------------------------------------------------------------ links
    def _links_of_segment(self, index: int) -> LinksLayout:
        sid = self.segment_id_of(index)
        files = self._segment_files[sid]
        name = files.get("links")
        kept = segment_layouts.of(self.reader)
        with kept.lock:
            found = kept.links.get(sid)
            if found is None or found[0] != name:
                cols = self._segments[sid]
                file = self.index_dir / SEGMENTS_DIR / name if name else None
                found = kept.links[sid] = (name or "", links_layout(file, cols.paths))
                for gone in [s for s in kept.links if s not in self._segment_files]:
                    del kept.links[gone]
        return found[1]

    def resolve(self, target: str, source: str, markdown: bool = False) -> str | None:
        """The vault path (a note, or a `.base` file) a link target names from `source`."""
        if not target or "://" in target:
            return None
        hit = self.resolver.resolve(target, source, markdown)
        if hit is None and self.bases:
            hit = self._base_resolver.resolve(target, source, markdown)
        return hit[0] if hit is not None else None

    def links(
        self, position: int, props: Mapping[str, object]
    ) -> tuple[tuple[LinkRef, ...], tuple[LinkRef, ...]]:
        """(links, embeds) of a note: body links in order, then frontmatter wikilinks."""
        source = self.paths[position]
        links: list[LinkRef] = []
        embeds: list[LinkRef] = []
        where = self._locate(position)
        if where is not None:
            layout = self._links_of_segment(where[0])
            for i in range(int(layout.starts[where[1]]), int(layout.starts[where[1] + 1])):
                target, kind = layout.targets[i], layout.kinds[i]
                if not target:
                    continue
                ref = LinkRef(target, self.resolve(target, source, kind == "markdown"))
                (embeds if kind == "embed" else links).append(ref)
        for text in wikilink_texts(props.values()):
            for m in WIKILINK.finditer(text):
                target = m.group(1).split("#", 1)[0].strip()
                if target:
                    links.append(LinkRef(target, self.resolve(target, source)))
        return tuple(links), tuple(embeds)

    def backlinks(self, path: str) -> list[str]:
        """The notes linking to `path` (body links, embeds, frontmatter links), by path."""
        with self._lock:
            index = self._backlinks
        if index is None:
            built: dict[str, set[str]] = {}
            for position, source in enumerate(self.paths):
                found, embeds = self.links(position, LazyProperties(self, position))
                for ref in (*found, *embeds):
                    if ref.path is not None and ref.path != source:
                        built.setdefault(ref.path, set()).add(source)
            index = {p: sorted(s) for p, s in built.items()}
            with self._lock:
                self._backlinks = index
        return index.get(path, [])

    # ------------------------------------------------------------------ rows
    def info(
        self, position: int, needs: Needs, store: dict[int, dict[str, object]] | None = None
    ) -> FileInfo:
        """The FileInfo of the note at `position` (links only when `needs` says so)."""
        return self.infos([position], needs, store)[0]

    def infos(
        self, positions: list[int], needs: Needs, store: dict[int, dict[str, object]] | None = None
    ) -> list[FileInfo]:
        """FileInfos of many notes (one gather of their columns); their properties are read
        from `store` when it holds them (a batch's, `properties_many`), else on first use."""
        columns = ["size", "mtime_ns", "ctime_ns", *(["all_tags"] if needs.tags else [])]
        records = self.notes.select(columns).take(pa.array(positions, pa.int64())).to_pylist()
        out: list[FileInfo] = []
        for position, record in zip(positions, records, strict=True):
            props = LazyProperties(self, position, store)
            tags = tuple(t if t.startswith("#") else "#" + t for t in record.get("all_tags") or [])
            links: tuple[LinkRef, ...] = ()
            embeds: tuple[LinkRef, ...] = ()
            if needs.links:
                links, embeds = self.links(position, props)
            mtime, ctime = record["mtime_ns"], record["ctime_ns"]
            out.append(
                FileInfo(
                    path=self.paths[position],
                    size=int(record["size"] or 0),
                    ctime=_micros_to_local(ctime if ctime is not None else mtime),
                    mtime=_micros_to_local(mtime),
                    tags=tags,
                    links=links,
                    embeds=embeds,
                    properties=props,
                )
            )
        return out

    def base_info(self, path: str) -> FileInfo | None:
        """A `.base` file of the snapshot as a file (`this` of a base opened by itself)."""
        ref = self.bases.get(path)
        if ref is None:
            return None
        moment = _micros_to_local(ref.mtime_ns)
        return FileInfo(path=ref.path, size=ref.size, ctime=moment, mtime=moment)


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
