"""What the writer knows of each indexed note (`NoteInfo`), read from a segment's `notes`
rows, and the index-wide counts kept from them (incrementally: a commit costs in
proportion to its change)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from vault_agent.contracts import Manifest, SegmentRef
from vault_agent.indexer.scan import KnownNote
from vault_agent.indexer.segments import read_live

Totals = tuple[int, int, int]  # chunks, headings, notes with invalid frontmatter


@dataclass(frozen=True)
class NoteInfo(KnownNote):
    segment_id: int
    chunks: int
    headings: int
    fm_invalid: bool


def infos_of(tables: dict[str, pa.Table], segment_id: int) -> dict[str, NoteInfo]:
    n = tables["notes"]
    cols = [n.column(c).to_pylist() for c in ("path", "mtime_ns", "size", "sha256")]
    chunks = n.column("chunk_count").to_pylist()
    heads = n.column("heading_count").to_pylist()
    fm = n.column("fm_status").to_pylist()
    return {
        p: NoteInfo(m, s, h, segment_id, c or 0, hc or 0, f == "invalid")
        for p, m, s, h, c, hc, f in zip(*cols, chunks, heads, fm, strict=True)
    }


def note_totals(infos: Iterable[NoteInfo]) -> Totals:
    c = h = inv = 0
    for info in infos:
        c += info.chunks
        h += info.headings
        inv += info.fm_invalid
    return c, h, inv


def known_notes(index_dir: Path, manifest: Manifest) -> dict[str, NoteInfo]:
    """The infos of every live note of a snapshot, from its segments' `notes` rows."""
    notes: dict[str, NoteInfo] = {}
    cols = ["mtime_ns", "size", "sha256", "chunk_count", "heading_count", "fm_status"]
    for ref in manifest.segments:
        notes.update(infos_of({"notes": read_live(index_dir, ref, "notes", cols)}, ref.segment_id))
    return notes


def totals_after(
    totals: Totals, notes: Mapping[str, NoteInfo], remove: Iterable[str], add: Mapping[str, NoteInfo]
) -> tuple[Totals, int]:
    """The counts and the note count once `remove` are gone and `add` are in (or replace
    their old infos), from the counts of `notes` and the infos the change touches only."""
    touched = [notes[p] for p in {*remove, *add} if p in notes]
    old, new = note_totals(touched), note_totals(add.values())
    after = (totals[0] - old[0] + new[0], totals[1] - old[1] + new[1], totals[2] - old[2] + new[2])
    return after, len(notes) - len(touched) + len(add)


def tombstoned(
    segments: list[SegmentRef], notes: Mapping[str, NoteInfo], paths: Iterable[str]
) -> list[SegmentRef]:
    """`segments` with the rows of `paths` marked deleted in the segment each note's info
    names (a changed or deleted note's old rows)."""
    tomb: dict[int, set[str]] = {}
    for p in paths:
        tomb.setdefault(notes[p].segment_id, set()).add(p)
    return [
        s.model_copy(update={"deleted": sorted(set(s.deleted) | tomb[s.segment_id])})
        if s.segment_id in tomb
        else s
        for s in segments
    ]
