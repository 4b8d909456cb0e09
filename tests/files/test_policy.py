"""Seed 002 policies (.system/, daily/) and SPEC protected folders on every write tool."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.errors import Conflict, Forbidden, InvalidPath
from vault_agent.files.policy import check_write, is_daily_name
from vault_agent.paths import Vault

from .conftest import tree

Call = Callable[..., dict[str, Any]]


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("2024-01-05.md", True),
        ("2024-02-29.md", True),
        ("2023-02-29.md", False),
        ("2024-13-01.md", False),
        ("2024-1-05.md", False),
        ("2024-01-05.txt", False),
        ("2024-01-05.md.md", False),
        ("note.md", False),
    ],
)
def test_daily_name(name: str, ok: bool) -> None:
    assert is_daily_name(name) is ok


ACTIONS = ["create", "overwrite", "append", "replace", "edit", "move_from", "move_to", "delete", "mkdir"]


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("rel", [".system/x.md", ".System/x.md", ".system./x.md", ".SYSTEM", ".system"])
def test_system_refused_for_every_action(tmp_path: Path, action: Any, rel: str) -> None:
    with pytest.raises(Forbidden, match=r"\.system"):
        check_write(Vault(tmp_path), rel, action)


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize(
    "rel",
    [
        ".obsidian/app.json",
        ".Obsidian/x.md",
        ".OBSIDIAN./x.md",
        "sub/.git/config",
        ".trash/x.md",
        ".TRASH",
        ".smarthole/inbox.md",
        ".vault-agent/CURRENT",
        "a/.Vault-Agent /x",
    ],
)
def test_protected_refused_for_every_action(tmp_path: Path, action: Any, rel: str) -> None:
    with pytest.raises(Forbidden, match="protected"):
        check_write(Vault(tmp_path), rel, action)


@pytest.mark.parametrize(
    ("action", "allowed"),
    [
        ("create", True),
        ("append", True),
        ("overwrite", False),
        ("replace", False),
        ("edit", False),
        ("move_from", False),
        ("move_to", False),
        ("delete", False),
        ("mkdir", False),
    ],
)
@pytest.mark.parametrize("rel", ["daily/2024-01-05.md", "Daily/2024-01-05.md"])
def test_daily_matrix(tmp_path: Path, action: Any, allowed: bool, rel: str) -> None:
    if allowed:
        check_write(Vault(tmp_path), rel, action)
    else:
        with pytest.raises(Forbidden, match="daily"):
            check_write(Vault(tmp_path), rel, action)


@pytest.mark.parametrize(
    "rel", ["daily/notes.md", "daily/2024-02-30.md", "daily/x/2024-01-05.md", "daily/2024-01-05.txt"]
)
@pytest.mark.parametrize("action", ["create", "append"])
def test_daily_bad_names(tmp_path: Path, rel: str, action: Any) -> None:
    with pytest.raises(Forbidden, match="YYYY-MM-DD"):
        check_write(Vault(tmp_path), rel, action)


def test_daily_folder_itself(tmp_path: Path) -> None:
    check_write(Vault(tmp_path), "daily", "mkdir")
    for action in ("delete", "move_from", "move_to"):
        with pytest.raises(Forbidden):
            check_write(Vault(tmp_path), "daily", action)


def test_temp_names_and_root(tmp_path: Path) -> None:
    with pytest.raises(InvalidPath):
        check_write(Vault(tmp_path), "a/.vault-agent-tmp-0123", "create")
    with pytest.raises(InvalidPath):
        check_write(Vault(tmp_path), "", "delete")


# ---- through the tools ------------------------------------------------------------------
def test_daily_lifecycle(call: Call, vault_dir: Path) -> None:
    call("create", path="daily/2024-01-05.md", content="- one\n")
    call("write", path="daily/2024-01-05.md", content="- two\n", mode="append")
    assert (vault_dir / "daily/2024-01-05.md").read_text() == "- one\n- two\n"
    before = tree(vault_dir)
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("write", {"path": "daily/2024-01-05.md", "content": "x", "mode": "overwrite"}),
        ("replace", {"path": "daily/2024-01-05.md", "find": "one", "replace": "1"}),
        ("edit", {"path": "daily/2024-01-05.md", "old_text": "one", "new_text": "1"}),
        ("edit", {"path": "daily/2024-01-05.md", "delete_lines": {"start_line": 1, "end_line": 1}}),
        ("mv", {"source": "daily/2024-01-05.md", "destination": "notes/d.md"}),
        ("mv", {"source": "notes/a.md", "destination": "daily/2024-01-06.md"}),
        ("rm", {"path": "daily/2024-01-05.md"}),
        ("rm", {"path": "daily"}),
        ("create", {"path": "daily/today.md", "content": "x"}),
        ("mkdir", {"path": "daily/sub"}),
    ]
    for name, raw in attempts:
        with pytest.raises(Forbidden):
            call(name, **raw)
    assert tree(vault_dir) == before
    with pytest.raises(Conflict):
        call("create", path="daily/2024-01-05.md", content="again")


def test_system_through_tools(call: Call, vault_dir: Path) -> None:
    before = tree(vault_dir)
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("create", {"path": ".system/new.md", "content": "x"}),
        ("write", {"path": ".system/rules.md", "content": "x", "mode": "append"}),
        ("replace", {"path": ".system/rules.md", "find": "reserved", "replace": "x"}),
        ("edit", {"path": ".system/rules.md", "insert_after_line": 0, "content": "x"}),
        ("mv", {"source": ".system/rules.md", "destination": "notes/r.md"}),
        ("mv", {"source": "notes/a.md", "destination": ".system/a.md"}),
        ("mv", {"source": ".system", "destination": "sys"}),
        ("rm", {"path": ".system/rules.md"}),
        ("rm", {"path": ".SYSTEM"}),
        ("mkdir", {"path": ".system/sub"}),
    ]
    for name, raw in attempts:
        with pytest.raises(Forbidden):
            call(name, **raw)
    assert tree(vault_dir) == before
    assert call("info", path=".system/rules.md")["data"]["type"] == "file"  # readable


@pytest.mark.parametrize(
    "rel",
    [
        ".obsidian/x.md",
        ".OBSIDIAN/x.md",
        ".obsidian./x.md",
        ".trash/x.md",
        ".Git/hooks/x",
        unicodedata.normalize("NFD", ".smarthole/é.md"),
    ],
)
def test_protected_through_tools(call: Call, vault_dir: Path, rel: str) -> None:
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian/x.md").write_text("cfg")
    before = tree(vault_dir)
    for name, raw in [
        ("create", {"path": rel, "content": "x"}),
        ("write", {"path": rel, "content": "x", "mode": "append"}),
        ("edit", {"path": rel, "old_text": "cfg", "new_text": "x"}),
        ("mv", {"source": "notes/a.md", "destination": rel}),
        ("mv", {"source": rel, "destination": "notes/z.md"}),
        ("rm", {"path": rel}),
        ("mkdir", {"path": rel}),
        ("info", {"path": rel}),
    ]:
        with pytest.raises(Forbidden):
            call(name, **raw)
    assert tree(vault_dir) == before


def test_folder_holding_protected_folder_not_moved_or_deleted(call: Call, vault_dir: Path) -> None:
    (vault_dir / "proj/.git").mkdir(parents=True)
    (vault_dir / "proj/.git/HEAD").write_text("ref")
    (vault_dir / "proj/n.md").write_text("n")
    before = tree(vault_dir)
    with pytest.raises(Forbidden):
        call("mv", source="proj", destination="proj2")
    with pytest.raises(Forbidden):
        call("rm", path="proj")
    with pytest.raises(Forbidden):
        call("rm", path="proj", permanent=True)
    assert tree(vault_dir) == before
