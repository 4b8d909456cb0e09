"""Atomic replacement primitives: temp names, prechecks, no-clobber rename, read-back check."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_agent.errors import Conflict, InvalidPath, TooLarge
from vault_agent.files.atomic import (
    ChangedAfterWrite,
    is_temp_name,
    open_original,
    read_current,
    rename_noreplace,
    replace_atomic,
)
from vault_agent.files.swap import exchange, swap_back


@pytest.fixture
def dfd(tmp_path: Path):
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


# --- compare-and-swap: an editor's save landing just before the swap is never lost --------


def _editor_rename_save(path: Path, data: bytes) -> None:
    tmp = path.with_name(".editor-save")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _swap_write(tmp_path: Path, dfd: int, editor: Callable[[Path], None] | None) -> None:
    original = open_original(dfd, "n.md", "n.md")
    assert original is not None
    try:
        replace_atomic(
            dfd,
            "n.md",
            "n.md",
            original.data + b"agent\n",
            precheck=(lambda: editor(tmp_path / "n.md")) if editor else None,
            original=original,
        )
    finally:
        original.close()


@pytest.mark.parametrize(
    ("editor", "expected"),
    [
        pytest.param(lambda p: _editor_rename_save(p, b"old\neditor\n"), b"old\neditor\n", id="temp+rename"),
        pytest.param(lambda p: p.write_bytes(b"old\neditor\n"), b"old\neditor\n", id="in-place"),
        pytest.param(lambda p: p.write_bytes(b"OLD\n"), b"OLD\n", id="in-place-same-size"),
    ],
)
def test_save_racing_the_swap_is_kept_and_answered_conflict(
    tmp_path: Path, dfd: int, editor: Callable[[Path], None], expected: bytes
) -> None:
    (tmp_path / "n.md").write_bytes(b"old\n")
    with pytest.raises(ChangedAfterWrite, match="nothing was written"):
        _swap_write(tmp_path, dfd, editor)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]
    assert (tmp_path / "n.md").read_bytes() == expected


def test_swap_replaces_exactly_what_was_read(tmp_path: Path, dfd: int) -> None:
    (tmp_path / "n.md").write_bytes(b"old\n")
    os.chmod(tmp_path / "n.md", 0o600)
    _swap_write(tmp_path, dfd, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]
    assert (tmp_path / "n.md").read_bytes() == b"old\nagent\n"
    assert (tmp_path / "n.md").stat().st_mode & 0o777 == 0o600


def test_swap_back_keeps_an_editor_save_that_landed_during_the_undo(tmp_path: Path, dfd: int) -> None:
    # State after a detected conflict, plus an editor save over our swapped-in file:
    # the temp name holds the displaced save D, the note holds the editor's newer save X.
    (tmp_path / "ours").write_bytes(b"agent")
    ours = (tmp_path / "ours").stat().st_ino
    (tmp_path / "ours").unlink()
    (tmp_path / ".vault-agent-tmp-x").write_bytes(b"D")
    (tmp_path / "n.md").write_bytes(b"X")
    swap_back(dfd, ".vault-agent-tmp-x", "n.md", ours)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]
    assert (tmp_path / "n.md").read_bytes() == b"X"


def test_exchange_swaps_two_names(tmp_path: Path, dfd: int) -> None:
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    exchange(dfd, "a", "b")
    assert ((tmp_path / "a").read_text(), (tmp_path / "b").read_text()) == ("b", "a")
    with pytest.raises(FileNotFoundError):
        exchange(dfd, "a", "missing")
