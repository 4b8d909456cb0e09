"""Parsed notes into new segments: the parse workers' tables (parse_pool.py) written as
segments that roll over at a size bound, each note's rows also added to the search engine's
pending changes. The writer (`build.Indexer`) commits what this wrote, or rolls the engine
back when it raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vault_agent.config import Settings
from vault_agent.contracts import SegmentRef
from vault_agent.indexer.note_info import NoteInfo, infos_of
from vault_agent.indexer.parse_pool import Progress, parse_stream
from vault_agent.indexer.search_index import SearchIndexWriter
from vault_agent.indexer.segments import SegmentWriter, drop_paths
from vault_agent.paths import Vault

# A segment is sorted in memory, so its size bounds the writer's peak RSS (the sort copies
# it once): roll over to a new segment at this many notes or Arrow bytes.
SEGMENT_MAX_NOTES = 5_000
SEGMENT_MAX_BYTES = 160 << 20


@dataclass
class WrittenSegments:
    """What one pass wrote: the new segments, the infos of their notes, the paths gone."""

    refs: list[SegmentRef] = field(default_factory=list)
    infos: dict[str, NoteInfo] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


class SegmentBuilder:
    """Parses notes into new segments of one index dir, feeding the search engine too."""

    def __init__(self, settings: Settings, vault: Vault, search: SearchIndexWriter) -> None:
        self.settings = settings
        self.vault = vault
        self.index_dir = Path(settings.index_dir)
        self.search = search

    def write(
        self, rels: list[str], first_id: int, progress: Progress | None, known: Mapping[str, NoteInfo] | None
    ) -> WrittenSegments:
        """Parse `rels` into segments numbered from `first_id`; with `known`, a note whose
        mtime, size and hash are the ones known is left out (unchanged)."""
        out = WrittenSegments()
        seg_id = first_id
        writer: SegmentWriter | None = None
        try:
            for tables, gone in parse_stream(self.settings, self.vault, rels, progress):
                out.missing.extend(gone)
                if known is not None:
                    same = {
                        p
                        for p, info in infos_of(tables, 0).items()
                        if (old := known.get(p)) is not None
                        and (old.mtime_ns, old.size, old.sha256) == (info.mtime_ns, info.size, info.sha256)
                    }
                    tables = drop_paths(tables, same)
                if not tables["notes"].num_rows:
                    continue
                if writer is None:
                    writer = SegmentWriter(self.index_dir, seg_id, presorted=True)
                    seg_id += 1
                writer.add(tables)
                self.search.add_tables(tables)
                out.infos.update(infos_of(tables, writer.segment_id))
                if writer.note_count >= SEGMENT_MAX_NOTES or writer.nbytes >= SEGMENT_MAX_BYTES:
                    out.refs.append(writer.finish())
                    writer = None
            if writer is not None:
                out.refs.append(writer.finish())
                writer = None
        finally:
            if writer is not None:
                writer.abort()
        return out
