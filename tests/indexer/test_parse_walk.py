"""Vault.walk: which files become notes (RELIABILITY.md §4 cases (20), (21); exclusions; order)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_agent.indexer.parse import parse_note
from vault_agent.paths import Exclusions, Vault, WalkReport

REPO = Path(__file__).resolve().parents[2]


def make(root: Path, files: dict[str, str]) -> Vault:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return Vault(root)


def test_walk_sorted_notes_only_with_stat(tmp_path: Path) -> None:
    vault = make(tmp_path, {"b.md": "bb", "a/z.md": "z", "a/y.MD": "y", "c.txt": "no", "a/b/c.md": ""})
    entries = list(vault.walk())
    assert [e.rel for e in entries] == ["b.md", "a/y.MD", "a/z.md", "a/b/c.md"]
    assert [e.size for e in entries] == [2, 1, 1, 0]
    st = os.stat(tmp_path / "b.md")
    assert entries[0].mtime_ns == st.st_mtime_ns
    assert [e.rel for e in vault.walk(notes_only=False)] == ["b.md", "c.txt", "a/y.MD", "a/z.md", "a/b/c.md"]


def test_walk_default_exclusions_any_depth(tmp_path: Path) -> None:
    files = {
        f"{d}/x.md": "x"
        for d in (
            ".obsidian",
            ".git",
            "node_modules",
            ".trash",
            ".vault-agent",
            "__pycache__",
            ".venv",
            "venv",
            ".cache",
            "build",
            "dist",
            "a/node_modules",
            "a/b/.obsidian",
        )
    }
    files.update({"keep.md": "k", "a/keep.md": "k", ".github/keep.md": "k", ".system/README.md": "s"})
    vault = make(tmp_path, files)
    assert [e.rel for e in vault.walk()] == ["keep.md", ".github/keep.md", ".system/README.md", "a/keep.md"]


def test_walk_user_globs(tmp_path: Path) -> None:
    make(tmp_path, {"a.md": "", "drafts/b.md": "", "x/drafts/c.md": "", "tmp-1.md": ""})
    vault = Vault(tmp_path, exclusions=Exclusions(["drafts/", "tmp-*.md"]))
    assert [e.rel for e in vault.walk()] == ["a.md"]


def test_20_undecodable_file_name_skipped_and_counted(tmp_path: Path) -> None:
    make(tmp_path, {"good.md": "# ok"})
    root = os.fsencode(tmp_path)
    with open(root + b"/bad\xff.md", "wb") as fh:
        fh.write(b"# bad")
    os.mkdir(root + b"/dir\xfe")
    with open(root + b"/dir\xfe/inner.md", "wb") as fh:
        fh.write(b"x")
    report = WalkReport()
    vault = Vault(tmp_path)
    entries = list(vault.walk(report))
    assert [e.rel for e in entries] == ["good.md"]
    assert report.undecodable_names == 2
    # Every listed path is valid Unicode, so it can be stored and serialized.
    for e in entries:
        e.rel.encode("utf-8")


def test_21_nfc_nfd_twins_reported_not_merged(tmp_path: Path) -> None:
    nfc_name, nfd_name = "caf\u00e9.md", "cafe\u0301.md"
    (tmp_path / nfd_name).write_text("nfd", encoding="utf-8")
    (tmp_path / nfc_name).write_text("nfc", encoding="utf-8")
    report = WalkReport()
    vault = Vault(tmp_path)
    entries = list(vault.walk(report))
    assert [e.rel for e in entries] == [nfc_name]
    assert report.normalization_collisions == [nfc_name]
    # The entry kept is the file spelled in NFC on disk.
    raw = vault.read_bytes(vault.resolve(entries[0].rel, match="exact"))
    assert raw == b"nfc"


def test_21_nfd_only_name_listed_as_nfc(tmp_path: Path) -> None:
    (tmp_path / "cafe\u0301.md").write_text("x", encoding="utf-8")
    assert [e.rel for e in Vault(tmp_path).walk()] == ["caf\u00e9.md"]


def test_21_case_twins_both_listed(tmp_path: Path) -> None:
    make(tmp_path, {"Note.md": "upper", "note.md": "lower"})
    report = WalkReport()
    assert [e.rel for e in Vault(tmp_path).walk(report)] == ["Note.md", "note.md"]
    assert report.normalization_collisions == []


def test_walk_skips_symlinks_and_loops(tmp_path: Path) -> None:
    vault_root = tmp_path / "v"
    make(vault_root, {"a.md": "a", "sub/b.md": "b"})
    (tmp_path / "outside.md").write_text("secret")
    os.symlink(tmp_path / "outside.md", vault_root / "link.md")
    os.symlink(vault_root, vault_root / "sub" / "loop")
    report = WalkReport()
    assert [e.rel for e in Vault(vault_root).walk(report)] == ["a.md", "sub/b.md"]
    assert report.symlinks_skipped == 2


@pytest.mark.parametrize("name", ["orientation", "demo", "outline"])
def test_fixture_vaults_parse_cleanly(name: str) -> None:
    vault = Vault(REPO / "fixtures" / name)
    for entry in vault.walk():
        raw = vault.read_bytes(vault.resolve(entry.rel, match="exact"))
        note = parse_note(entry.rel, raw, entry.mtime_ns, entry.size).note
        assert "parse_error" not in note["flags"]
        assert note["size"] == len(raw)
