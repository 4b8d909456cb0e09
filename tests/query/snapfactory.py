"""Hand-built committed snapshots for query tests (before/besides the engine's builder).

Rows come from the real parser (`parse_note`); files follow contracts.py exactly: one
Parquet file per table per segment, sorted per TABLE_SORT, a manifest, and CURRENT.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from testkit import parsed_rows

from vault_agent.config import Settings
from vault_agent.contracts import (
    CURRENT_FILE,
    PARSER_VERSION,
    ROW_GROUP_SIZE,
    SCHEMA_VERSION,
    SEGMENTS_DIR,
    SNAPSHOTS_DIR,
    TABLE_SORT,
    TABLES,
    Manifest,
    ParsedNote,
    SegmentRef,
)
from vault_agent.indexer.parse import parse_note


def settings_for(vault: Path, index_dir: Path | None = None) -> Settings:
    return Settings(vault=vault, index_dir=index_dir or vault / ".vault-agent")


def write_vault(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


class SnapFactory:
    """Writes segments and manifests into a state dir; each commit replaces CURRENT."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.state = Path(settings.index_dir)
        for sub in (SNAPSHOTS_DIR, SEGMENTS_DIR, "tmp"):
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        self.segments: list[SegmentRef] = []
        self.next_seg = 1
        self.next_snap = 1
        self.notes: dict[str, ParsedNote] = {}
        self.seg_of: dict[str, int] = {}

    def walk(self) -> list[str]:
        """Every note of the vault as the real walk sees it (exclusions, links skipped)."""
        from vault_agent.paths import vault_for_settings

        return [e.rel for e in vault_for_settings(self.settings).walk()]

    def parse(self, rel: str) -> ParsedNote:
        path = Path(self.settings.vault) / rel
        raw = path.read_bytes()
        return parse_note(rel, raw, path.stat().st_mtime_ns, len(raw))

    def write_segment(self, parsed: list[ParsedNote]) -> SegmentRef:
        seg_id = self.next_seg
        self.next_seg += 1
        files: dict[str, str] = {}
        for table, schema in TABLES.items():
            rows = [r for p in parsed for r in parsed_rows(p, table)]
            rows.sort(key=lambda r: tuple(r[c] for c in TABLE_SORT[table]))
            tbl = pa.Table.from_pylist(rows, schema=schema)
            name = f"seg-{seg_id}.{table}.parquet"
            pq.write_table(tbl, self.state / SEGMENTS_DIR / name, row_group_size=ROW_GROUP_SIZE)
            files[table] = name
        return SegmentRef(segment_id=seg_id, files=files, note_count=len(parsed))

    def commit(
        self,
        upserts: Sequence[str] = (),
        deletes: Sequence[str] = (),
        *,
        fingerprint: str | None = None,
        schema_version: int = SCHEMA_VERSION,
    ) -> Manifest:
        """Parse `upserts` into a new segment, tombstone replaced/deleted rows, commit."""
        parsed = [self.parse(rel) for rel in upserts]
        changed = set(upserts) | set(deletes)
        for seg in self.segments:
            held = {p for p, s in self.seg_of.items() if s == seg.segment_id}
            seg.deleted = sorted(set(seg.deleted) | (held & changed))
        for rel in deletes:
            self.notes.pop(rel, None)
            self.seg_of.pop(rel, None)
        if parsed:
            seg = self.write_segment(parsed)
            self.segments.append(seg)
            for p in parsed:
                self.seg_of[p.note["path"]] = seg.segment_id
                self.notes[p.note["path"]] = p
        # A segment none of whose rows are live leaves the manifest (as compaction does).
        alive = set(self.seg_of.values())
        self.segments = [s for s in self.segments if s.segment_id in alive]
        live = list(self.notes.values())
        sid = self.next_snap
        self.next_snap += 1
        manifest = Manifest(
            snapshot_id=sid,
            schema_version=schema_version,
            parser_version=PARSER_VERSION,
            config_fingerprint=fingerprint or self.settings.index_fingerprint(),
            applied_seq=sid,
            created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC).isoformat().replace("+00:00", "Z"),
            segments=[s.model_copy(deep=True) for s in self.segments],
            note_count=len(live),
            chunk_count=sum(len(p.chunks) for p in live),
            heading_count=sum(len(p.headings) for p in live),
            invalid_frontmatter_count=sum(1 for p in live if p.note["fm_status"] == "invalid"),
        )
        name = f"manifest-{sid}.json"
        (self.state / SNAPSHOTS_DIR / name).write_text(manifest.model_dump_json(), encoding="utf-8")
        tmp = self.state / "tmp" / "CURRENT.tmp"
        tmp.write_text(name, encoding="utf-8")
        os.replace(tmp, self.state / CURRENT_FILE)
        return manifest
