"""Unit tests of every formula and default of the exploration tools, plus properties."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.errors import InvalidParameter, TooLarge
from vault_agent.paths import Vault
from vault_agent.query import coverage, files, scan
from vault_agent.query.audit import parse_artifact, parse_markers
from vault_agent.query.find import Cand, integrate, normalize
from vault_agent.query.globmatch import compile_glob
from vault_agent.query.line_ranges import complement, merge_ranges
from vault_agent.query.lines import TextFile, page, split_lines


def test_split_lines_matches_the_indexer_line_model() -> None:
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\n") == ["a\n"]
    assert split_lines("a\r\nb\rc\n\nd") == ["a\r\n", "b\r", "c\n", "\n", "d"]


def test_merge_ranges_merges_overlapping_and_adjacent_and_clips() -> None:
    assert merge_ranges([(5, 7), (1, 2), (3, 4), (6, 9), (20, 30), (50, 60)], 25) == [(1, 9), (20, 25)]
    assert complement([(1, 9), (20, 25)], 25) == [(10, 19)]
    assert complement([], 0) == []
    assert complement([], 3) == [(1, 3)]


def test_coverage_ratio_and_threshold() -> None:
    cov = coverage.compute_coverage([(1, 4)], 5)
    assert (cov.covered_lines, cov.coverage_ratio) == (4, 0.8)
    assert coverage.compute_coverage([], 0).coverage_ratio == 1.0
    assert coverage.compute_coverage([(1, 1)], 3).coverage_ratio == 0.333333
    coverage.check_ranges([(3, 2)])  # reversed: accepted, normalized by merging
    assert coverage.compute_coverage([(3, 2)], 5).covered == [(2, 3)]
    with pytest.raises(InvalidParameter):
        coverage.check_ranges([(0, 2)])
    with pytest.raises(TooLarge):
        coverage.check_ranges([(1, 1)] * 10_001)


ranges = st.lists(
    st.tuples(st.integers(1, 300), st.integers(0, 120)).map(lambda t: (t[0], t[0] + t[1])), max_size=40
)


@settings(max_examples=200, deadline=None)
@given(ranges, st.integers(0, 400))
def test_property_coverage_is_a_ratio_and_merged_ranges_never_overlap(
    rs: list[tuple[int, int]], total: int
) -> None:
    cov = coverage.compute_coverage(rs, total)
    assert 0.0 <= cov.coverage_ratio <= 1.0
    for (_, b), (c, _) in zip(cov.covered, cov.covered[1:], strict=False):
        assert b + 1 < c  # disjoint and not even adjacent
    assert all(1 <= a <= b <= total for a, b in cov.covered + cov.uncovered)
    assert cov.covered_lines + sum(b - a + 1 for a, b in cov.uncovered) == total
    lines = {i for a, b in rs for i in range(a, b + 1) if i <= total}
    assert cov.covered_lines == len(lines)


texts = st.text(alphabet=st.sampled_from(list("ab \n\r\té灯")), max_size=400)


@settings(max_examples=200, deadline=None)
@given(texts, st.integers(1, 50))
def test_property_pages_concatenate_to_the_file(text: str, budget: int) -> None:
    lines = split_lines(text)
    assert "".join(lines) == text
    out, line, char = [], 1, 0
    for _ in range(10_000):
        if line > len(lines):
            break
        pg = page(lines, line, char, len(lines), budget)
        assert len(pg.text) <= budget
        out.append(pg.text)
        if pg.next_line is None:
            break
        line, char = pg.next_line, pg.next_char
    assert "".join(out) == text


@settings(max_examples=50, deadline=None)
@given(texts, st.integers(1, 60))
def test_property_vault_read_pages_give_back_the_file(
    tmp_path_factory: pytest.TempPathFactory, text: str, budget: int
) -> None:
    root = tmp_path_factory.mktemp("v")
    (root / "n.md").write_bytes(text.encode("utf-8"))
    vault = Vault(root)
    out, start, char = [], 1, None
    for _ in range(10_000):
        request = files.ReadRequest("n.md", full=True, start_line=start, start_char=char, max_chars=budget)
        d = files.vault_read(vault, request).data
        out.append(d.text)
        if d.next_offset.start_line is None:
            break
        start, char = d.next_offset.start_line, d.next_offset.start_char
    assert "".join(out) == text


def _vault(tmp_path: Path, text: str) -> Vault:
    (tmp_path / "n.md").write_text(text, encoding="utf-8")
    return Vault(tmp_path)


def test_read_defaults_and_reasons(tmp_path: Path) -> None:
    vault = _vault(tmp_path, "".join(f"line {i}\n" for i in range(1, 11)))
    with pytest.raises(InvalidParameter):
        files.vault_read(vault, files.ReadRequest("n.md"))
    d = files.vault_read(vault, files.ReadRequest("n.md", has_range=True, start_line=3, end_line=4)).data
    assert (d.text, d.truncated, d.truncated_reason, d.next_offset.start_line) == (
        "line 3\nline 4\n",
        True,
        "range_end",
        5,
    )
    d = files.vault_read(vault, files.ReadRequest("n.md", full=True, start_line=9)).data
    assert (d.text, d.truncated, d.truncated_reason, d.next_offset.start_line) == (
        "line 9\nline 10\n",
        False,
        "none",
        None,
    )
    d = files.vault_read(vault, files.ReadRequest("n.md", full=True, max_chars=15)).data
    assert (d.text, d.truncated_reason, d.applied_range.end_line) == ("line 1\nline 2\n", "max_chars", 2)
    with pytest.raises(InvalidParameter):
        files.vault_read(vault, files.ReadRequest("n.md", full=True, max_chars=0))
    with pytest.raises(InvalidParameter):
        files.vault_read(vault, files.ReadRequest("n.md", has_range=True, start_line=5, end_line=4))
    past = files.vault_read(vault, files.ReadRequest("n.md", has_range=True, start_line=50))
    assert (past.data.text, past.data.applied_range.start_line, [w.code for w in past.warnings]) == (
        "",
        50,
        ["RANGE_PAST_END"],
    )
    assert files.effective_max_chars(None) == (20_000, False)
    assert files.effective_max_chars(100_001) == (100_000, True)


def test_scan_defaults_and_bounds(tmp_path: Path) -> None:
    vault = _vault(tmp_path, "x\n" * 450)
    d = scan.vault_scan(vault, scan.ScanRequest("n.md")).data
    assert (d.applied_range.start_line, d.applied_range.end_line, d.eof, d.truncated_reason) == (
        1,
        200,
        False,
        "chunk_end",
    )
    assert d.next_cursor.start_line == 201
    assert [a.type for a in d.next_actions] == ["vault_scan", "vault_coverage"]
    last = scan.vault_scan(vault, scan.ScanRequest("n.md", start_line=401)).data
    assert (last.applied_range.end_line, last.eof, last.truncated_reason, last.next_cursor.start_line) == (
        450,
        True,
        "none",
        None,
    )
    assert [(a.type, a.params) for a in last.next_actions] == [("vault_coverage", {"path": "n.md"})]
    for bad in (0, 1001):
        with pytest.raises(InvalidParameter):
            scan.vault_scan(vault, scan.ScanRequest("n.md", chunk_lines=bad))
    cut = scan.vault_scan(vault, scan.ScanRequest("n.md", chunk_lines=10, max_chars=5)).data
    assert (cut.text, cut.truncated, cut.truncated_reason, cut.next_cursor.start_line) == (
        "x\nx\n",
        True,
        "max_chars",
        3,
    )


def test_citation_markers_and_node_tree() -> None:
    assert parse_markers("a [L12] b [L3-L5, L9] [l20-22] [L7–L8] [x12] L4") == [
        (12, 12),
        (3, 5),
        (9, 9),
        (20, 22),
        (7, 8),
    ]
    doc = TextFile(
        "a.md",
        split_lines(
            "---\nt: 1\n---\n# Top\n- one [L1]\n  - child\n    [L2]\n- two\n## Sub [L3]\n```\n- not [L9]\n```\n"
        ),
    )
    nodes = parse_artifact(doc)
    assert [(n.id, n.kind, n.cites, [c.id for c in n.children]) for n in nodes] == [
        ("n4", "heading", [], ["n5", "n8", "n9"]),
        ("n5", "item", [(1, 1)], ["n6"]),
        ("n6", "item", [(2, 2)], []),
        ("n8", "item", [], []),
        ("n9", "heading", [(3, 3)], []),
    ]


def test_find_normal_form_and_integration() -> None:
    assert normalize("  Ｌａｍｐ\n  GLASS ") == "lamp glass"
    cands = [
        Cand("b.md", 0, 1, 5, True, 1.0, frozenset()),
        Cand("b.md", 1, 6, 9, False, 0.5, frozenset()),
        Cand("b.md", 2, 20, 25, False, 0.7, frozenset()),
        Cand("a.md", 0, 3, 4, False, 0.6, frozenset()),
    ]
    assert [(g.path, g.start, g.end, g.exact, g.best) for g in integrate(cands)] == [
        ("a.md", 3, 4, False, 0.6),
        ("b.md", 1, 9, True, 1.0),
        ("b.md", 20, 25, False, 0.7),
    ]


def test_glob_rules() -> None:
    md = compile_glob("*.MD")
    assert md is not None and md("a/b/Note.md") and not md("a/b.txt")
    proj = compile_glob("Projects/**")
    assert proj is not None and proj("projects/x/y.md") and not proj("other/projects/y.md")
    alt = compile_glob("**/{daily,inbox}/*.md")
    assert alt is not None and alt("daily/a.md") and alt("x/Inbox/b.md") and not alt("x/inbox/c/b.md")
    assert compile_glob(None) is None and compile_glob("  ") is None
    with pytest.raises(InvalidParameter):
        compile_glob("{a,b")


def test_per_snapshot_cache_keeps_only_the_two_newest_snapshots() -> None:
    from vault_agent.query.snapshot_cache import remember

    cache: dict[object, object] = {("chunk_seg", "seg-1.chunks.parquet"): "segment entry"}
    for sid in range(1, 6):
        remember(cache, "related_paths", sid, f"paths {sid}")
        remember(cache, "bm25_stats", sid, (sid, 1.0))
    assert cache == {
        ("chunk_seg", "seg-1.chunks.parquet"): "segment entry",
        ("related_paths", 4): "paths 4",
        ("related_paths", 5): "paths 5",
        ("bm25_stats", 4): (4, 1.0),
        ("bm25_stats", 5): (5, 1.0),
    }


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("[[]].md", "[].md", True),
        ("[[]].md", "x.md", False),
        ("a[&b].md", "a&.md", True),
        ("a[!|].md", "a|.md", False),
    ],
)
def test_a_glob_class_holding_brackets_or_set_operators_is_literal(
    pattern: str, path: str, matches: bool
) -> None:
    """fnmatch's rule: `[[]` is a class holding '[' (never a nested set, which Python's re
    warns about: the fuzz test once turned that warning into an INTERNAL answer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        match = compile_glob(pattern)
    assert match is not None and match(path) is matches
