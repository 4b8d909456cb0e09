"""The row-group index of the term-sorted segments (what `vault_find`'s Stage 0 reads)."""

from __future__ import annotations

from pathlib import Path

from vault_agent.query.postings import SegmentTerms


def test_row_groups_for_a_term_use_the_minimums() -> None:
    seg = SegmentTerms(1, Path("x"), None, ["a", "c", "c", "f", "k"])
    assert seg.groups_for(["0"]) == []
    assert seg.groups_for(["a"]) == [0]
    assert seg.groups_for(["b"]) == [0]
    assert seg.groups_for(["c"]) == [0, 1, 2]
    assert seg.groups_for(["d", "z"]) == [2, 4]
    assert seg.groups_for(["f"]) == [2, 3]
