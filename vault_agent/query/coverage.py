"""`vault_coverage` (seed 002): how much of a file the cited line ranges cover.

Cited ranges are clipped to 1..total_lines, then overlapping and adjacent ranges merge.
coverage_ratio = covered_lines / total_lines (1.0 when total_lines = 0), rounded to 6
decimals; meets_min_coverage = coverage_ratio >= COVERAGE_MIN_RATIO (0.8).
next_actions (first = recommended):
- below the minimum → vault_scan of the first uncovered range (confidence 1 - ratio)
- at or above it, gaps left → artifact_audit {source_path} (0.7), vault_scan of the first gap (0.3)
- fully covered → artifact_audit {source_path} (0.7), stop (0.3)
"""

from __future__ import annotations

from vault_agent.contracts import Outcome
from vault_agent.errors import InvalidParameter, TooLarge
from vault_agent.paths import Vault
from vault_agent.query.limits import COVERAGE_MIN_RATIO, MAX_CITED_RANGES
from vault_agent.query.line_ranges import complement, covered_count, merge_ranges
from vault_agent.query.lines import load_text
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.wire import LineRange, NextAction, Wire, action, ratio, scan_params, stop


class CoverageData(Wire):
    path: str
    total_lines: int
    covered_lines: int
    coverage_ratio: float
    covered_ranges: list[LineRange]
    uncovered_ranges: list[LineRange]
    meets_min_coverage: bool
    next_actions: list[NextAction]


class Coverage(Wire):
    """The arithmetic of coverage, shared with artifact_audit."""

    total_lines: int
    covered: list[tuple[int, int]]
    uncovered: list[tuple[int, int]]
    covered_lines: int
    coverage_ratio: float


def check_ranges(ranges: list[tuple[int, int]]) -> None:
    """Raises: InvalidParameter for a range before line 1; TooLarge for more than
    MAX_CITED_RANGES ranges. A reversed range is normalized (its ends swapped) by the caller."""
    if len(ranges) > MAX_CITED_RANGES:
        raise TooLarge.naming(
            "at most {most} ranges in {cited_ranges}; merge them first", most=MAX_CITED_RANGES
        )
    for a, b in ranges:
        if a < 1 or b < 1:
            raise InvalidParameter.naming("line numbers in {cited_ranges} must be 1 or more")


def compute_coverage(ranges: list[tuple[int, int]], total: int) -> Coverage:
    """Clip, merge and measure ranges against a file of `total` lines."""
    merged = merge_ranges(ranges, total)
    count = covered_count(merged)
    value = 1.0 if total == 0 else ratio(count / total)
    return Coverage(
        total_lines=total,
        covered=merged,
        uncovered=complement(merged, total),
        covered_lines=count,
        coverage_ratio=value,
    )


def coverage_actions(path: str, cov: Coverage) -> list[NextAction]:
    first_gap = cov.uncovered[0] if cov.uncovered else None
    if cov.coverage_ratio < COVERAGE_MIN_RATIO:
        return [action("vault_scan", 1.0 - cov.coverage_ratio, scan_params(path, first_gap))]
    audit = action("artifact_audit", 0.7, {"source_path": path})
    if first_gap is not None:
        return [audit, action("vault_scan", 0.3, scan_params(path, first_gap))]
    return [audit, stop(0.3)]


def vault_coverage(
    vault: Vault, path: object, cited_ranges: list[tuple[int, int]], reader: SnapshotReader | None = None
) -> Outcome[CoverageData]:
    """Coverage of a file by cited line ranges, with the gaps left and what to do next.

    Raises:
        InvalidParameter: a malformed range. TooLarge: more than 1,000 ranges.
        InvalidPath, Forbidden, Ambiguous, NotFound: see lines.load_text.
    """
    check_ranges(cited_ranges)
    doc = load_text(vault, path, reader, "coverage")
    cov = compute_coverage(cited_ranges, doc.total_lines)
    data = CoverageData(
        path=doc.path,
        total_lines=cov.total_lines,
        covered_lines=cov.covered_lines,
        coverage_ratio=cov.coverage_ratio,
        covered_ranges=[LineRange(start_line=a, end_line=b) for a, b in cov.covered],
        uncovered_ranges=[LineRange(start_line=a, end_line=b) for a, b in cov.uncovered],
        meets_min_coverage=cov.coverage_ratio >= COVERAGE_MIN_RATIO,
        next_actions=coverage_actions(doc.path, cov),
    )
    return Outcome(data=data, warnings=doc.warnings())
