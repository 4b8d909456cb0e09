"""The walk (vault_agent/paths/walk.py) on the real file system, driven by its rules alone."""

from __future__ import annotations

import os
from pathlib import Path

from vault_agent.paths.rules import Exclusions, PathRules
from vault_agent.paths.walk import WalkReport, walk_vault


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_walk_reports_what_it_passes_over(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.md": "a", "b.txt": "b", "state/x.md": "s", ".git/c.md": "g", "sub/d.md": "d"})
    (tmp_path / "cafe\u0301.md").write_text("nfd")
    (tmp_path / "caf\u00e9.md").write_text("nfc")
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"bad\xff.md"), os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkfifo(tmp_path / "pipe.md")
    os.link(tmp_path / "a.md", tmp_path / "twin-link.md")
    rules = PathRules(Exclusions(extra_paths=frozenset({"state"})), protected_paths=frozenset({"state"}))
    report = WalkReport()
    entries = list(walk_vault(tmp_path, rules, report))
    assert [e.rel for e in entries] == ["caf\u00e9.md", "sub/d.md"]
    assert report.undecodable_names == 1
    assert report.normalization_collisions == ["caf\u00e9.md"]
    assert report.special_files_skipped == 1
    assert report.hardlinks_skipped == 2  # both names of the linked file
    assert entries[0].size == len("nfc")  # the NFC spelling on disk is the one kept


def test_walk_all_files_when_not_notes_only(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.md": "a", "b.txt": "bb", "z/c.MD": "c"})
    entries = list(walk_vault(tmp_path, PathRules(), notes_only=False))
    assert [(e.rel, e.size) for e in entries] == [("a.md", 1), ("b.txt", 2), ("z/c.MD", 1)]


def test_walk_reports_case_twins_and_keeps_both(tmp_path: Path) -> None:
    _tree(tmp_path, {"Dir/a.md": "1", "dir/b.md": "2"})
    report = WalkReport()
    assert [e.rel for e in walk_vault(tmp_path, PathRules(), report)] == ["Dir/a.md", "dir/b.md"]
    assert report.case_twins == ["dir"]
