"""Descriptor-relative I/O (vault_agent/paths/: descriptor_io.py, resolution.py, file_read.py)
on the real file system.

The property under test: whatever happens to the tree between a check and a use (a folder
swapped for a link, a file replaced by a FIFO), no byte outside the vault root is read
and nothing is created outside it; errors name the caller's path, never the root.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from vault_agent.errors import InvalidPath, NotFound
from vault_agent.paths import file_read, resolution
from vault_agent.paths.descriptor_io import DescriptorIO
from vault_agent.paths.resolution import lookup

CANARY = b"canary-outside\n"


@pytest.fixture()
def io(tmp_path: Path) -> DescriptorIO:
    root = tmp_path / "vault"
    (root / "Notes" / "Sub").mkdir(parents=True)
    (root / "Notes" / "Sub" / "Deep.md").write_bytes(b"deep\n")
    (root / "caf\u00e9.md").write_bytes(b"nfc\n")
    outside = tmp_path / "outside"
    (outside / "Sub").mkdir(parents=True)
    (outside / "Sub" / "Deep.md").write_bytes(CANARY)
    return DescriptorIO(root)


def _swap_for_link(io: DescriptorIO, folder: str) -> None:
    """Replace a vault folder by a link to the outside tree of the same shape."""
    shutil.rmtree(io.root / folder)
    os.symlink(io.root.parent / "outside", io.root / folder)


def test_root_is_the_real_path(tmp_path: Path, io: DescriptorIO) -> None:
    os.symlink(io.root, tmp_path / "alias")
    assert DescriptorIO(tmp_path / "alias").root == io.root


def test_lookup_matches_by_rule(io: DescriptorIO) -> None:
    fd = io.open_root()
    try:
        assert lookup(fd, "notes", "casefold") == "Notes"
        assert lookup(fd, "notes", "normalized") is None
        assert lookup(fd, "cafe\u0301.md", "normalized") == "caf\u00e9.md"
        assert lookup(fd, "cafe\u0301.md", "exact") is None
        assert lookup(fd, "x" * 300, "casefold") is None  # ENAMETOOLONG is "no such name"
    finally:
        os.close(fd)


def test_resolve_reads_and_stats_case_insensitively(io: DescriptorIO) -> None:
    res = resolution.resolve(io, "notes/sub/deep.md")
    assert (res.rel, res.raw_parts, res.is_dir) == ("Notes/Sub/Deep.md", ("Notes", "Sub", "Deep.md"), False)
    assert file_read.read_bytes(io, res) == b"deep\n"
    assert file_read.read_bytes(io, res, max_bytes=2) == b"de"
    assert resolution.lstat(io, res).st_size == 5
    assert io.abspath(res) == io.root / "Notes" / "Sub" / "Deep.md"
    assert (
        resolution.resolve(io, "").is_dir
        and resolution.lstat(io, resolution.resolve(io, "")).st_ino == os.stat(io.root).st_ino
    )


def test_exists_exactly_does_not_fold_case(io: DescriptorIO) -> None:
    assert resolution.exists_exactly(io, "Notes/Sub/Deep.md")
    assert resolution.exists_exactly(io, "cafe\u0301.md")  # another normalization of the same name
    assert not resolution.exists_exactly(io, "notes/sub/deep.md")
    assert not resolution.exists_exactly(io, "Notes/missing.md")


def test_folder_swapped_for_a_link_after_resolve_is_not_read(io: DescriptorIO) -> None:
    res = resolution.resolve(io, "Notes/Sub/Deep.md")
    _swap_for_link(io, "Notes")
    with pytest.raises(InvalidPath) as exc:
        file_read.read_bytes(io, res)
    assert str(io.root) not in exc.value.message and "Notes/Sub/Deep.md" in exc.value.message
    with pytest.raises(InvalidPath):
        resolution.lstat(io, res)


def test_file_swapped_for_a_link_after_resolve_is_not_read(io: DescriptorIO) -> None:
    res = resolution.resolve(io, "Notes/Sub/Deep.md")
    (io.root / "Notes" / "Sub" / "Deep.md").unlink()
    os.symlink(io.root.parent / "outside" / "Sub" / "Deep.md", io.root / "Notes" / "Sub" / "Deep.md")
    with pytest.raises(InvalidPath):
        file_read.read_bytes(io, res)


def test_file_replaced_by_a_fifo_after_resolve_does_not_hang(io: DescriptorIO) -> None:
    res = resolution.resolve(io, "Notes/Sub/Deep.md")
    (io.root / "Notes" / "Sub" / "Deep.md").unlink()
    os.mkfifo(io.root / "Notes" / "Sub" / "Deep.md")
    with pytest.raises(InvalidPath):
        file_read.read_bytes(io, res)


def test_removed_file_is_not_found(io: DescriptorIO) -> None:
    res = resolution.resolve(io, "Notes/Sub/Deep.md")
    (io.root / "Notes" / "Sub" / "Deep.md").unlink()
    with pytest.raises(NotFound):
        file_read.read_bytes(io, res)


def test_a_folder_is_not_read_as_a_file(io: DescriptorIO) -> None:
    with pytest.raises(InvalidPath):
        file_read.read_bytes(io, resolution.resolve(io, "Notes"))


def test_open_dir_refuses_links_and_files(io: DescriptorIO) -> None:
    fd = resolution.open_dir(io, ("Notes", "Sub"), "Notes/Sub")
    try:
        assert sorted(os.listdir(fd)) == ["Deep.md"]
    finally:
        os.close(fd)
    with pytest.raises(InvalidPath):
        resolution.open_dir(io, ("Notes", "Sub", "Deep.md"), "Notes/Sub/Deep.md")
    _swap_for_link(io, "Notes")
    with pytest.raises(InvalidPath):
        resolution.open_dir(io, ("Notes", "Sub"), "Notes/Sub")


def test_open_parent_matches_normalization_but_not_case(io: DescriptorIO) -> None:
    fd, leaf, rel = resolution.open_parent(io, "Notes/Sub/cafe\u0301.md")
    os.close(fd)
    assert (leaf, rel) == ("cafe\u0301.md", "Notes/Sub/caf\u00e9.md")  # a new leaf keeps its spelling
    fd, leaf, rel = resolution.open_parent(io, "cafe\u0301.md")
    os.close(fd)
    assert (leaf, rel) == ("caf\u00e9.md", "caf\u00e9.md")  # an existing leaf: its on-disk name
    with pytest.raises(NotFound):
        resolution.open_parent(io, "notes/sub/new.md")  # another case of a folder is another folder


def test_open_parent_never_creates_outside(io: DescriptorIO) -> None:
    _swap_for_link(io, "Notes")
    with pytest.raises(InvalidPath):
        resolution.open_parent(io, "Notes/Sub/new.md", create=True)
    with pytest.raises(InvalidPath):
        resolution.open_parent(io, "Notes/Fresh/new.md", create=True)
    assert sorted(p.name for p in (io.root.parent / "outside").iterdir()) == ["Sub"]


def test_open_parent_through_a_file_is_invalid(io: DescriptorIO) -> None:
    with pytest.raises(InvalidPath):
        resolution.open_parent(io, "caf\u00e9.md/x.md", create=True)
