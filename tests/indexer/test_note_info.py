"""The writer's per-note bookkeeping (vault_agent/indexer/note_info.py): the index-wide counts
kept incrementally at each commit must equal a recount, and tombstones land in the segment
that holds each note's old rows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vault_agent.contracts import SegmentRef
from vault_agent.indexer.note_info import NoteInfo, note_totals, tombstoned, totals_after

PATHS = [f"n{i}.md" for i in range(8)]
infos = st.builds(
    NoteInfo,
    mtime_ns=st.just(1),
    size=st.just(1),
    sha256=st.just("h"),
    segment_id=st.integers(1, 3),
    chunks=st.integers(0, 5),
    headings=st.integers(0, 5),
    fm_invalid=st.booleans(),
)
notes_maps = st.dictionaries(st.sampled_from(PATHS), infos)


@given(before=notes_maps, remove=st.sets(st.sampled_from(PATHS)), add=notes_maps)
def test_incremental_totals_equal_a_recount(
    before: dict[str, NoteInfo], remove: set[str], add: dict[str, NoteInfo]
) -> None:
    after = {p: info for p, info in before.items() if p not in remove} | add
    totals, count = totals_after(note_totals(before.values()), before, remove, add)
    assert (totals, count) == (note_totals(after.values()), len(after))


def _segment(segment_id: int, deleted: list[str]) -> SegmentRef:
    return SegmentRef(segment_id=segment_id, note_count=10, deleted=deleted, files={})


def test_tombstones_go_to_the_segment_holding_each_note() -> None:
    notes = {
        "a.md": NoteInfo(1, 1, "h", 1, 0, 0, False),
        "b.md": NoteInfo(1, 1, "h", 2, 0, 0, False),
        "c.md": NoteInfo(1, 1, "h", 2, 0, 0, False),
    }
    segments = [_segment(1, []), _segment(2, ["z.md"]), _segment(3, [])]
    out = tombstoned(segments, notes, ["c.md", "a.md", "b.md"])
    assert [s.deleted for s in out] == [["a.md"], ["b.md", "c.md", "z.md"], []]
    assert out[2] is segments[2]  # untouched segments are passed on as they are
