"""`query.missing.missing_files`: every file the index passed over or holds without its
structure, with its rule and what to do, paged in a fixed order, the walk made only when the
snapshot's counts say there is something to name, and cached while paging."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_agent.config import Settings, load_settings
from vault_agent.errors import InvalidParameter
from vault_agent.indexer.build import build_index
from vault_agent.paths import WalkReport, vault_for_settings
from vault_agent.query.missing import COUNTS_CACHE_KEY, WALK_CACHE_KEY, missing_files
from vault_agent.query.snapshot import SnapshotReader

GOOD = "# Fine\n\nbody\n"


def _vault(tmp_path: Path) -> Settings:
    vault = tmp_path / "vault"
    files = {
        "a-bad.md": "---\ntitle: [unclosed\n---\n# A\n",
        "b-bad.md": "---\n- a list\n- not a mapping\n---\n# B\n",
        "c-bad.md": "---\n" + "k: v\n" * 20000 + "---\n# C\n",  # over 64 KiB
        "bin.md": "\x00\x01\x02" * 200,
        "Twin.md": GOOD,
        "twin.md": GOOD,
        "ok.md": GOOD,
        "real/target.md": GOOD,
    }
    for rel, text in files.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    os.symlink(vault / "real" / "target.md", vault / "linked.md")
    os.mkfifo(vault / "pipe.md")
    os.link(vault / "ok.md", vault / "ok-again.md")  # two names: both skipped (hard links)
    (vault / "cafe\u0301.md").write_text(GOOD, encoding="utf-8")  # NFD
    (vault / "caf\u00e9.md").write_text(GOOD, encoding="utf-8")  # NFC: the two collide
    os.close(os.open(os.path.join(os.fsencode(vault), b"bad\xff.md"), os.O_CREAT | os.O_WRONLY, 0o644))
    settings = load_settings({"vault": vault}, env={}, cwd=vault)
    build_index(settings, full=True)
    return settings


EXPECTED = [
    ("linked.md", "symlink"),
    ("ok-again.md", "hardlink"),
    ("ok.md", "hardlink"),
    ("pipe.md", "special_file"),
    ("café.md", "normalization_collision"),
    (".", "undecodable_name"),
    ("a-bad.md", "invalid_frontmatter"),
    ("b-bad.md", "invalid_frontmatter"),
    ("c-bad.md", "invalid_frontmatter"),
    ("bin.md", "binary"),
    ("Twin.md", "case_twin"),
    ("twin.md", "case_twin"),
]


def test_every_file_with_its_rule_paged_in_order(tmp_path: Path) -> None:
    settings = _vault(tmp_path)
    reader = SnapshotReader(settings, vault_for_settings(settings))
    cache: dict[object, object] = {}
    try:
        pages, cursor = [], None
        while True:
            page = missing_files(reader, cursor, 5, cache).data
            pages.append(page)
            cursor = page.next_cursor
            if cursor is None:
                break
        got = [(f.path, f.rule) for p in pages for f in p.files]
        assert got == EXPECTED
        assert [len(p.files) for p in pages] == [5, 5, 2]
        first = pages[0]
        assert first.total == len(EXPECTED) and not first.names_capped
        assert first.counts == {
            "symlink": 1,
            "hardlink": 2,
            "special_file": 1,
            "normalization_collision": 1,
            "undecodable_name": 1,
            "invalid_frontmatter": 3,
            "binary": 1,
            "case_twin": 2,
        }
        reasons = {f.rule: f.reason for p in pages for f in p.files}
        assert (
            "never followed" in reasons["symlink"]
            and "frontmatter is invalid" in reasons["invalid_frontmatter"]
        )
        bad = {f.path: f.reason for p in pages for f in p.files if f.rule == "invalid_frontmatter"}
        assert "does not parse" in bad["a-bad.md"] and "not a mapping" in bad["b-bad.md"]
        assert "64 KiB" in bad["c-bad.md"]
        walked_at, counted = cache[WALK_CACHE_KEY], cache[COUNTS_CACHE_KEY]
        missing_files(reader, "5", 5, cache)
        assert cache[WALK_CACHE_KEY] is walked_at  # paging reuses the walk
        assert cache[COUNTS_CACHE_KEY] is counted  # and the snapshot's counts (one count per snapshot)
    finally:
        reader.close()


def test_no_walk_when_the_snapshot_counts_nothing_to_name(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ok.md").write_text(GOOD, encoding="utf-8")
    settings = load_settings({"vault": vault}, env={}, cwd=vault)
    build_index(settings, full=True)
    reader = SnapshotReader(settings, vault_for_settings(settings))
    cache: dict[object, object] = {}
    try:
        data = missing_files(reader, None, None, cache).data
        assert (data.files, data.total, data.next_cursor) == ([], 0, None)
        assert WALK_CACHE_KEY not in cache
        for cursor, limit in (("x", 5), ("-1", 5), (None, 0), (None, 201)):
            with pytest.raises(InvalidParameter):
                missing_files(reader, cursor, limit, cache)
    finally:
        reader.close()


def test_the_walk_names_what_it_passes_over_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_agent.paths import walk

    for i in range(5):
        os.symlink("/nonexistent", tmp_path / f"l{i}.md")
    monkeypatch.setattr(walk, "MAX_NAMED_SKIPS", 3)
    report = WalkReport()
    from vault_agent.paths.rules import PathRules

    list(walk.walk_vault(tmp_path, PathRules(), report))
    assert report.symlinks_skipped == 5 and report.passed_over == [("symlink", f"l{i}.md") for i in range(3)]
