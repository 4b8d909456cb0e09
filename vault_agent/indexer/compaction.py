"""Background compaction: which small segments (and segments full of tombstones) to merge
into one (the policy), and the merge that rewrites them as one segment (`merge`). The
writer commits the merged segments like any other change (`Indexer.compact`, build.py).

Policy (Lucene-like tiers, bounded memory): small segments (fewer than SMALL_NOTES live
notes: the ones incremental commits make) are grouped by size class (powers of ten); when
a class holds more than MAX_SMALL_SEGMENTS segments they are merged into one; independently any
segment whose tombstones exceed TOMBSTONE_RATIO of its notes is rewritten with its live
rows only. Large segments of a full build are never merged with each other, so a merge
never holds the whole vault in memory. The result is committed like any other snapshot
(same applied_seq); the old files are collected by GC after the grace period.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from vault_agent.contracts import TABLES, Manifest, SegmentRef
from vault_agent.indexer.note_info import NoteInfo
from vault_agent.indexer.segments import SegmentWriter, read_live
from vault_agent.indexer.snapshot import next_ids

MAX_SMALL_SEGMENTS = 8
SMALL_NOTES = 2_000
# Dead rows a segment may keep before it is rewritten with its live rows only. This bounds
# the dead rows on disk (at most this share of the index, since a full build's big segments
# are the only ones never merged) and the tombstone lists every manifest repeats. Lower
# means more rewrites of big segments under sustained edits: at 5 edits/s spread over a 10k
# vault, each of its ~3,300-note full-build segments reaches 20 % after ~400 s, i.e. about one
# big rewrite every ~130 s (an estimate; ops/bench/bench_sustained.py measures the state dir).
TOMBSTONE_RATIO = 0.20


def _tier(live: int) -> int:
    """Size class of a segment: 0 for < 10 live notes, 1 for < 100, 2 for < 1,000, ..."""
    return len(str(max(live, 1))) - 1


def plan(manifest: Manifest) -> list[SegmentRef]:
    """The segments one compaction should merge (empty: nothing to do).

    Tiered: segments of the same size class (by powers of ten of live notes, below
    SMALL_NOTES) merge when more than MAX_SMALL_SEGMENTS of them exist, so a merge only
    rewrites segments of similar size and the cost per edit stays logarithmic.
    """
    pick: dict[int, SegmentRef] = {}
    tiers: dict[int, list[SegmentRef]] = {}
    for s in manifest.segments:
        live = s.note_count - len(s.deleted)
        if live < SMALL_NOTES:
            tiers.setdefault(_tier(live), []).append(s)
    for tier in sorted(tiers):
        if len(tiers[tier]) > MAX_SMALL_SEGMENTS:
            pick.update((s.segment_id, s) for s in tiers[tier])
            break
    for s in manifest.segments:
        if s.note_count and len(s.deleted) / s.note_count > TOMBSTONE_RATIO:
            pick[s.segment_id] = s
    return [pick[k] for k in sorted(pick)]


def overdue(manifest: Manifest) -> bool:
    """True when a size class holds twice the segments that trigger a merge.

    The writer compacts while idle; under a steady stream of edits it is never idle, so
    past this bound it compacts between commits anyway: live segments (and with them the
    per-request cost of reading a snapshot) stay bounded by about
    2 × MAX_SMALL_SEGMENTS per size class plus the segments of the last full build.
    """
    counts: dict[int, int] = {}
    for s in manifest.segments:
        live = s.note_count - len(s.deleted)
        if live < SMALL_NOTES:
            counts[_tier(live)] = counts.get(_tier(live), 0) + 1
    return any(n > 2 * MAX_SMALL_SEGMENTS for n in counts.values())


def due_while_busy(manifest: Manifest) -> bool:
    """True when compaction must not wait for a quiet moment: a size class is `overdue`,
    or a segment carries more dead rows than TOMBSTONE_RATIO (under a steady stream of
    edits the writer is never idle, and dead rows would otherwise grow without bound)."""
    return overdue(manifest) or any(
        s.note_count and len(s.deleted) / s.note_count > TOMBSTONE_RATIO for s in manifest.segments
    )


@dataclass(frozen=True)
class Merged:
    """A merge's outcome: the manifest's segments after it, and the notes it moved."""

    segments: list[SegmentRef]
    moved: dict[str, NoteInfo]  # each moved note's info, now in the new segment


def merge(index_dir: Path, manifest: Manifest, notes: Mapping[str, NoteInfo]) -> Merged | None:
    """Rewrite the segments `plan` picks as one segment of their live rows (none when every
    row was dead); None when the policy picks nothing. `notes`: the writer's infos."""
    picked = plan(manifest)
    if not picked:
        return None
    _, seg_id = next_ids(index_dir, manifest)
    writer = SegmentWriter(index_dir, seg_id)
    try:
        for ref in picked:
            writer.add({t: read_live(index_dir, ref, t) for t in TABLES})
        merged_paths = writer.paths()
        new_ref: SegmentRef | None = writer.finish() if writer.note_count else None
    except BaseException:
        writer.abort()
        raise
    gone = {s.segment_id for s in picked}
    segments = [s for s in manifest.segments if s.segment_id not in gone]
    moved: dict[str, NoteInfo] = {}
    if new_ref is not None:
        segments.append(new_ref)
        moved = {p: replace(notes[p], segment_id=new_ref.segment_id) for p in merged_paths}
    return Merged(segments, moved)
