"""The notes of one pinned snapshot as Bases rows: a `FileInfo` per note, built on demand.

Rows are the snapshot's live notes (Bases lists every file of the vault; vault-agent
indexes notes, so attachments are not rows: docs/bases.md). Everything comes from the
snapshot, never from the disk:

- path, size, mtime, ctime and tags (frontmatter and inline, `#`-prefixed) from the live
  notes table vault_query reads (`relations.live_notes`);
- properties from the typed `props` rows (`columnar.Columns`, shared with vault_query,
  held by `row_columns.PropertyColumns`), rebuilt per note on first access
  (`LazyProperties`) under their names as written (`fm_fields`): strings, numbers,
  booleans, dates (`date`), date-times (`datetime`), null, lists and maps. The index
  keeps 100 items of a list, maps 3 levels deep, lists in lists empty and 256 values per
  note (docs/query.md); a note past those bounds shows what was kept;
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.contracts import SEGMENTS_DIR, BaseFileRef
from vault_agent.linkpaths import LinkResolver
from vault_agent.query.bases.row_columns import LazyProperties, PropertyColumns
from vault_agent.query.bases.row_layouts import (
    WIKILINK,
    Ints,
    LinksLayout,
    links_layout,
    segment_layouts,
    wikilink_texts,
)
from vault_agent.query.bases.values import FileInfo, LinkRef
from vault_agent.query.related import path_index
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.structured.relations import dead_by_segment, live_notes


@dataclass(frozen=True)
class Needs:
    """What the view's expressions read beyond the cheap fields (see views.needs_of)."""

    links: bool = False
    tags: bool = True


def _micros_to_local(ns: int | None) -> dt.datetime | None:
    if ns is None:
        return None
    return dt.datetime.fromtimestamp(ns / 1e9).replace(microsecond=(ns // 1000) % 1_000_000)


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
        # vault_query's typed columns and the properties read from them (row_columns.py)
        self.props = PropertyColumns(reader, view, self.notes)
        self.resolver: LinkResolver = path_index(view, cache)
        self.bases: dict[str, BaseFileRef] = {ref.path: ref for ref in view.manifest.bases}
        self._base_resolver = LinkResolver(sorted(self.bases))
        self._segment_files = {s.segment_id: s.files for s in view.manifest.segments}
        self._backlinks: dict[str, list[str]] | None = None
        self._path_rank: Ints | None = None
        self._lock = threading.Lock()

    def path_rank(self) -> Ints:
        """Each note's rank in code-point order of paths (the last sort key of every view)."""
        with self._lock:
            if self._path_rank is None:
                order = np.asarray(pc.sort_indices(self.notes["path"]).to_numpy(), np.int64)
                rank = np.empty(self.count, np.int64)
                rank[order] = np.arange(self.count, dtype=np.int64)
                self._path_rank = rank
            return self._path_rank

    # ------------------------------------------------------------------ links
    def _links_of_segment(self, index: int) -> LinksLayout:
        sid = self.props.segment_id_of(index)
        files = self._segment_files[sid]
        name = files.get("links")
        kept = segment_layouts.of(self.reader)
        with kept.lock:
            found = kept.links.get(sid)
            if found is None or found[0] != name:
                cols = self.props.segments[sid]
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
        where = self.props.locate(position)
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
                found, embeds = self.links(position, LazyProperties(self.props, position))
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
            props = LazyProperties(self.props, position, store)
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
