"""Three-way merge of lines: take back one side's change, keep every other edit.

`merge(base, mine, theirs)` combines the changes base→mine and base→theirs. Undo uses it
with base = the file right after one agent write, mine = the file now (the person's edits
included), theirs = the file right before that write: the result is the file now without
that write's hunks.

Each side's changes are hunks of `difflib.SequenceMatcher` opcodes over whole lines
(`\\n`-terminated bytes, so no encoding is assumed). Hunks of both sides are clustered when
they share base lines, or when both insert at the same place; a cluster changed on one
side takes that side, one changed identically on both takes it once, any other is a
conflict and the merge answers None: the caller must not guess. Unlike diff3 and git,
hunks that only touch (one ends where the other starts, an insertion at the edge of a
replaced range) are not a conflict: their order in the base is unambiguous, and the
common undo case (the person wrote a line right after the agent's appended one) merges.

Why our own: `merge3` (breezy's diff3) is GPL-2.0-or-later and vault-agent is MIT; the
other PyPI candidates are character-level patchers with fuzzy placement
(diff-match-patch, three-merge), which could put a hunk in the wrong place.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher


@dataclass(frozen=True)
class Hunk:
    start: int  # base lines [start, end) are replaced by `lines`; start == end inserts
    end: int
    lines: tuple[bytes, ...]
    side: int  # 0: mine, 1: theirs


def split_lines(data: bytes) -> list[bytes]:
    """Lines ending in `\\n` (the last may lack it); only `\\n` separates lines."""
    if not data:
        return []
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def hunks(base: list[bytes], other: list[bytes], side: int) -> list[Hunk]:
    """The changes that turn `base` into `other`."""
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [
        Hunk(i1, i2, tuple(other[j1:j2]), side)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _clusters(all_hunks: list[Hunk]) -> list[list[Hunk]]:
    """Hunks grouped where they overlap (shared base lines, or insertions at one place)."""
    ordered = sorted(all_hunks, key=lambda h: (h.start, h.end, h.side))
    groups: list[list[Hunk]] = []
    reach = -1  # the end of the current group's base range
    for h in ordered:
        if groups:
            group = groups[-1]
            same_insert = h.start == h.end and any(g.start == g.end == h.start for g in group)
            if h.start < reach or same_insert:
                group.append(h)
                reach = max(reach, h.end)
                continue
        groups.append([h])
        reach = h.end
    return groups


def _version(base: list[bytes], start: int, end: int, side_hunks: list[Hunk]) -> list[bytes]:
    """Base lines [start, end) with one side's hunks applied."""
    out: list[bytes] = []
    at = start
    for h in side_hunks:
        out.extend(base[at : h.start])
        out.extend(h.lines)
        at = h.end
    out.extend(base[at:end])
    return out


def merge(base: bytes, mine: bytes, theirs: bytes) -> bytes | None:
    """Both sides' changes to `base` together, or None when they conflict."""
    base_lines = split_lines(base)
    groups = _clusters(hunks(base_lines, split_lines(mine), 0) + hunks(base_lines, split_lines(theirs), 1))
    out: list[bytes] = []
    at = 0
    for group in groups:
        start, end = min(h.start for h in group), max(h.end for h in group)
        out.extend(base_lines[at:start])
        sides = [[h for h in group if h.side == s] for s in (0, 1)]
        if not sides[1]:
            out.extend(_version(base_lines, start, end, sides[0]))
        elif not sides[0]:
            out.extend(_version(base_lines, start, end, sides[1]))
        else:
            ours, others = (_version(base_lines, start, end, s) for s in sides)
            if ours != others:
                return None
            out.extend(ours)
        at = end
    out.extend(base_lines[at:])
    return b"".join(out)


def changed_lines(before: bytes, after: bytes) -> tuple[int, int]:
    """(lines added, lines removed) between two versions: what a merge kept of others' edits."""
    added = removed = 0
    for h in hunks(split_lines(before), split_lines(after), 0):
        added += len(h.lines)
        removed += h.end - h.start
    return added, removed
