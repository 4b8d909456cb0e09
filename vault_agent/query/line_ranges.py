"""Sets of line ranges of one file: merged, their complement, how many lines they cover."""

from __future__ import annotations


def merge_ranges(ranges: list[tuple[int, int]], total: int) -> list[tuple[int, int]]:
    """Swap reversed ranges, clip to 1..total, then merge overlapping and adjacent ones (sorted)."""
    ordered = [(min(a, b), max(a, b)) for a, b in ranges]
    clipped = sorted((max(1, a), min(total, b)) for a, b in ordered if b >= 1 and a <= total)
    merged: list[tuple[int, int]] = []
    for a, b in clipped:
        if merged and a <= merged[-1][1] + 1:
            if b > merged[-1][1]:
                merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def complement(merged: list[tuple[int, int]], total: int) -> list[tuple[int, int]]:
    """The lines of 1..total not in the merged ranges, as ranges."""
    out: list[tuple[int, int]] = []
    nxt = 1
    for a, b in merged:
        if a > nxt:
            out.append((nxt, a - 1))
        nxt = b + 1
    if nxt <= total:
        out.append((nxt, total))
    return out


def covered_count(merged: list[tuple[int, int]]) -> int:
    return sum(b - a + 1 for a, b in merged)
