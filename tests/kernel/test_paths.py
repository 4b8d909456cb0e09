"""Path safety: normalization, traversal, symlinks, special files, case-insensitive reads."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from vault_agent.errors import Forbidden, InvalidPath, NotFound
from vault_agent.paths import Exclusions, Vault, is_daily, is_protected, is_system, normalize_rel_path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("notes/a.md", "notes/a.md"),
        ("./notes//a.md", "notes/a.md"),
        ("notes/sub/../a.md", "notes/a.md"),
        ("notes\\a.md", "notes/a.md"),
        ("cafe\u0301.md", "caf\u00e9.md"),
        ("%2e%2e/x.md", "%2e%2e/x.md"),  # decoded once by HTTP; literal text here is a file name
    ],
)
def test_normalize_accepts(raw: str, expected: str) -> None:
    assert normalize_rel_path(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "../x.md",
        "a/../../b.md",
        "..\\x.md",
        "/etc/passwd",
        "C:\\x.md",
        "c:/x.md",
        "\\\\srv\\share\\x.md",
        "~/x.md",
        "a\x00b.md",
        "a\nb.md",
        "",
        ".",
        "x" * 5000,
        "a/" + "b" * 300 + ".md",
        "file:///etc/passwd.md",
        "file:/etc/x.md",
        "https://example.invalid/etc/x.md",
        "a/../~/x.md",  # collapses to text refused as typed (found by hypothesis)
        "./C:/x.md",
        "a/../file:/etc/x.md",
    ],
)
def test_normalize_rejects(raw: str) -> None:
    with pytest.raises(InvalidPath) as exc:
        normalize_rel_path(raw)
    assert "/etc" not in exc.value.message


def test_root_allowed_only_when_asked() -> None:
    assert normalize_rel_path("", allow_root=True) == ""
    assert normalize_rel_path("a/..", allow_root=True) == ""


@pytest.mark.parametrize(
    "rel",
    [
        ".obsidian/app.json",
        ".OBSIDIAN/x",
        "a/.git/config",
        ".trash/x.md",
        ".vault-agent/token",
        ".Smarthole/x",
        ".obsidian./x",
        ".obsidian /x",
    ],
)
def test_protected_any_case_any_depth(rel: str) -> None:
    assert is_protected(rel)


def test_not_protected() -> None:
    assert not is_protected("notes/obsidian.md")
    assert not is_protected("git/x.md")


def test_system_and_daily() -> None:
    assert is_system(".system/readme.md") and is_system(".SYSTEM/x")
    assert is_daily("daily/2026-01-05.md") and is_daily("Daily/x.md")
    assert not is_daily("daily") and not is_system("notes/.system.md")


def test_exclusions_any_depth_and_user_globs() -> None:
    ex = Exclusions(["drafts/", "*.tmp.md", "/top-only.md"])
    assert ex.excluded("a/node_modules/x.md", False)
    assert ex.excluded("a/b/.obsidian", True)
    assert ex.excluded("x/drafts/y.md", False)
    assert ex.excluded("x/y.tmp.md", False)
    assert ex.excluded("top-only.md", False)
    assert not ex.excluded("sub/top-only.md", False)
    assert ex.excluded("a/.DS_Store", False)
    assert not ex.excluded("a/build.md", False)  # a note named like a folder is not a folder
    assert ex.excluded("a/build/x.md", False)


@pytest.fixture()
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    (root / "Projects" / "Alpha").mkdir(parents=True)
    (root / "Projects" / "Alpha" / "Plan.md").write_text("# Plan\n")
    (root / "top.md").write_text("top\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("canary-outside\n")
    os.symlink(outside, root / "linkdir")
    os.symlink(outside / "secret.md", root / "link.md")
    os.symlink(root / "loop", root / "loop")
    return Vault(root)


def test_resolve_case_insensitive_read(vault: Vault) -> None:
    res = vault.resolve("projects/alpha/plan.md")
    assert res.rel == "Projects/Alpha/Plan.md"
    assert vault.read_bytes(res) == b"# Plan\n"


def test_resolve_exact_for_writes(vault: Vault) -> None:
    with pytest.raises(NotFound):
        vault.resolve("projects/alpha/plan.md", match="normalized")


def test_case_twins_are_ambiguous(vault: Vault) -> None:
    (vault.root / "Top.md").write_text("twin\n")
    assert vault.resolve("top.md").rel == "top.md"  # exact match wins
    with pytest.raises(NotFound):
        vault.resolve("TOP.md")  # two case-insensitive candidates: never guess


@pytest.mark.parametrize("rel", ["linkdir/secret.md", "link.md", "loop/x.md", "loop"])
def test_symlinks_never_followed(vault: Vault, rel: str) -> None:
    with pytest.raises((InvalidPath, NotFound)) as exc:
        res = vault.resolve(rel)
        vault.read_bytes(res)
    assert str(vault.root) not in exc.value.message


def test_fifo_and_socket_refused(vault: Vault) -> None:
    os.mkfifo(vault.root / "pipe.md")
    with pytest.raises(InvalidPath):
        vault.resolve("pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(vault.root / "s.md"))
        with pytest.raises(InvalidPath):
            vault.resolve("s.md")
    finally:
        sock.close()


def test_open_parent_refuses_symlinked_dir(vault: Vault) -> None:
    with pytest.raises(InvalidPath):
        vault.open_parent("linkdir/new.md", create=True)
    assert not (vault.root.parent / "outside" / "new.md").exists()


def test_open_parent_creates_parents(vault: Vault) -> None:
    fd, leaf, rel = vault.open_parent("new/deep/n.md", create=True)
    os.close(fd)
    assert (leaf, rel) == ("n.md", "new/deep/n.md")
    assert (vault.root / "new" / "deep").is_dir()


def test_check_not_protected(vault: Vault) -> None:
    with pytest.raises(Forbidden):
        vault.check_not_protected(".Obsidian/workspace.json")


def test_walk_skips_links_excluded_and_special(vault: Vault) -> None:
    (vault.root / "node_modules").mkdir()
    (vault.root / "node_modules" / "x.md").write_text("x")
    (vault.root / "a.txt").write_text("not a note")
    os.mkfifo(vault.root / "fifo.md")
    rels = [e.rel for e in vault.walk()]
    assert rels == ["top.md", "Projects/Alpha/Plan.md"]


def test_hardlinked_files_are_neither_read_nor_indexed(vault: Vault) -> None:
    outside = vault.root.parent / "outside" / "secret.md"
    os.link(outside, vault.root / "hard.md")
    with pytest.raises(InvalidPath) as exc:
        vault.read_bytes(vault.resolve("hard.md"))
    assert str(vault.root) not in exc.value.message
    from vault_agent.paths import WalkReport

    report = WalkReport()
    assert "hard.md" not in [e.rel for e in vault.walk(report)]
    assert report.hardlinks_skipped == 1
