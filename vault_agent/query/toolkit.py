"""Shared pieces of the seed 002 exploration tools: limits, line ranges, next actions.

Seed 002's payloads are snake_case on every surface (names on the wire = Python names).
Numbers that are ratios are rounded to 6 decimals so answers are byte-stable.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# --------------------------------------------------------------------------- limits (SPEC)
READ_DEFAULT_MAX_CHARS = 20_000
READ_HARD_MAX_CHARS = 100_000
SCAN_DEFAULT_CHUNK_LINES = 200  # VAULT_SCAN_DEFAULT_CHUNK_LINES
SCAN_MAX_CHUNK_LINES = 1_000  # VAULT_SCAN_MAX_CHUNK_LINES
SEARCH_DEFAULT_LIMIT = 50
SEARCH_MAX_LIMIT = 500
MAX_CONTEXT_LINES = 10  # vault_search context lines before/after a match
FIND_MAX_CANDIDATES_CAP = 10_000  # vault_find budget.max_candidates upper bound
FIND_MAX_TIME_MS = 600_000  # vault_find budget.time_ms upper bound
LS_MAX_ENTRIES = 1_000  # vault_ls limit upper bound
LS_DEFAULT_LIMIT = 100
LS_MAX_CHARS = 20_000  # one vault_ls page's entries, as JSON (next_cursor for the rest)
FIND_DEFAULT_TIME_MS = 60_000
FIND_DEFAULT_MAX_CANDIDATES = 200
COVERAGE_MIN_RATIO = 0.8
MARGINAL_GAIN_MIN = 0.05
MAX_CITED_RANGES = 1_000  # TOO_LARGE above: the answer lists the merged ranges back
# Answer budgets (Operation.max_answer_chars): a read's text is at most READ_HARD_MAX_CHARS;
# JSON escapes (\n, \") and the other fields come on top. Coverage lists up to 2 × 1,000 ranges.
READ_ANSWER_CHARS = 120_000
COVERAGE_ANSWER_CHARS = 100_000
MAX_FILE_BYTES = 32 * 1024 * 1024  # files read by the tools; TOO_LARGE above
RATIO_DIGITS = 6


def iso_seconds(mtime_ns: int) -> str:
    """A file time as ISO 8601 UTC to the second, e.g. `2026-01-05T10:00:00Z`."""
    return dt.datetime.fromtimestamp(mtime_ns // 1_000_000_000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ratio(value: float) -> float:
    """A ratio rounded for byte-stable output."""
    return round(float(value), RATIO_DIGITS)


class Wire(BaseModel):
    """Base of seed 002 payloads: snake_case on the wire, unknown fields refused."""

    model_config = ConfigDict(extra="forbid")


class LineRange(Wire):
    start_line: int
    end_line: int


class NextAction(Wire):
    """One proposal of seed 002: the tool to call next and its minimal parameters."""

    type: str
    confidence: float | None
    params: dict[str, Any] | None


def omit_none() -> Any:
    """A field default that disappears from the wire while it is None."""
    return Field(default=None, exclude_if=lambda v: v is None)


def action(kind: str, confidence: float | None, params: dict[str, Any] | None = None) -> NextAction:
    return NextAction(type=kind, confidence=None if confidence is None else ratio(confidence), params=params)


def stop(confidence: float = 1.0) -> NextAction:
    return action("stop", confidence, None)


# --------------------------------------------------------------------------- ranges
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


def scan_params(path: str, gap: tuple[int, int] | None) -> dict[str, Any]:
    """Minimal vault_scan params: the path, plus the cursor and size of a gap to fill."""
    params: dict[str, Any] = {"path": path}
    if gap is None:
        return params
    if gap[0] != 1:
        params["cursor"] = {"start_line": gap[0]}
    size = gap[1] - gap[0] + 1
    if size < SCAN_DEFAULT_CHUNK_LINES:
        params["chunk_lines"] = size
    return params


SNAPSHOTS_KEPT = 2  # the pinned snapshot and the one before it (requests may still hold it)


def remember(cache: dict[Any, Any], kind: str, snapshot_id: int, value: Any) -> None:
    """Store a per-snapshot cache entry and drop that kind's entries of older snapshots.

    A `serve --watch` commits a snapshot per save for months; without the drop every
    snapshot's entries would stay in the process forever.
    """
    cache[(kind, snapshot_id)] = value
    ids = sorted(k[1] for k in list(cache) if isinstance(k, tuple) and len(k) == 2 and k[0] == kind)
    for old in ids[:-SNAPSHOTS_KEPT]:
        cache.pop((kind, old), None)
