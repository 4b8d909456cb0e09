"""Atomic replacement primitives: temp names, prechecks, no-clobber rename, read-back check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_agent.errors import Conflict, InvalidPath, TooLarge
from vault_agent.files.atomic import (
    ChangedAfterWrite,
    is_temp_name,
    read_current,
    rename_noreplace,
    replace_atomic,
    verify,
)


@pytest.fixture
def dfd(tmp_path: Path):  # type: ignore[no-untyped-def]
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_replace_and_create(tmp_path: Path, dfd: int) -> None:
    replace_atomic(dfd, "n.md", "n.md", b"one", must_not_exist=True)
    assert (tmp_path / "n.md").read_bytes() == b"one"
    with pytest.raises(Conflict, match="already exists"):
        replace_atomic(dfd, "n.md", "n.md", b"two", must_not_exist=True)
    replace_atomic(dfd, "n.md", "n.md", b"three")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]
    assert (tmp_path / "n.md").read_bytes() == b"three"


def test_precheck_abort_leaves_target_and_no_temp(tmp_path: Path, dfd: int) -> None:
    (tmp_path / "n.md").write_bytes(b"old")

    def refuse() -> None:
        raise Conflict("changed meanwhile")

    with pytest.raises(Conflict, match="meanwhile"):
        replace_atomic(dfd, "n.md", "n.md", b"new", precheck=refuse)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]
    assert (tmp_path / "n.md").read_bytes() == b"old"


def test_verify_detects_other_bytes(tmp_path: Path, dfd: int) -> None:
    (tmp_path / "n.md").write_bytes(b"theirs")
    with pytest.raises(ChangedAfterWrite):
        verify(dfd, "n.md", "n.md", b"ours!!")
    verify(dfd, "n.md", "n.md", b"theirs")


def test_rename_noreplace(tmp_path: Path, dfd: int) -> None:
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    with pytest.raises(FileExistsError):
        rename_noreplace(dfd, "a", dfd, "b")
    assert (tmp_path / "b").read_text() == "b"
    rename_noreplace(dfd, "a", dfd, "c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "c"]


def test_read_current_rules(tmp_path: Path, dfd: int) -> None:
    assert read_current(dfd, "missing", "missing") is None
    (tmp_path / "d").mkdir()
    with pytest.raises(InvalidPath):
        read_current(dfd, "d", "d")
    (tmp_path / "l").symlink_to(tmp_path / "d")
    with pytest.raises(InvalidPath):
        read_current(dfd, "l", "l")
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(TooLarge):
        read_current(dfd, "big", "big", max_bytes=10)


def test_temp_names() -> None:
    assert is_temp_name(".vault-agent-tmp-0123abcd")
    assert not is_temp_name("vault-agent-tmp-x.md")
