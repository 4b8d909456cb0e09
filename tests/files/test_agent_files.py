"""Seed 003 aliases (agent-files profile): names, parameters, SmartHole-style outputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.ops import CATALOG
from vault_agent.errors import Conflict, Forbidden, NotFound

Call = Callable[..., dict[str, Any]]

ALIASES = {
    "read_file": "read",
    "write_file": "write",
    "edit_file": "write",
    "move": "write",
    "delete": "write",
    "search_files": "read",
    "list_files": "read",
    "get_file_info": "read",
    "create_folder": "write",
}


def test_alias_registration() -> None:
    for name, kind in ALIASES.items():
        op = CATALOG.named(name)
        assert (op.mcp_name, op.kind, op.profile, op.mcp_only) == (name, kind, "agent-files", True)
    assert CATALOG.named("delete").destructive is True


def test_read_file_line_numbers_and_cap(call: Call, vault_dir: Path) -> None:
    body = call("read_file", path="NOTES/a.md")
    assert body["data"] == {
        "path": "notes/a.md",  # the file actually read (case-insensitive lookup), like get_file_info
        "content": "1\t# A\n2\t\n3\talpha line\n4\tsecond line\n",
        "start_line": 1,
        "end_line": 4,
        "truncated": False,
        "next_start_line": None,
        "message": "lines 1-4",
    }
    (vault_dir / "notes/long.md").write_text("".join(f"l{i}\n" for i in range(1, 2501)))
    long = call("read_file", path="notes/long.md")["data"]
    assert (long["start_line"], long["end_line"], long["truncated"], long["next_start_line"]) == (
        1,
        2000,
        True,
        2001,
    )
    rest = call("read_file", path="notes/long.md", start_line=2001)["data"]
    assert (rest["end_line"], rest["next_start_line"], rest["content"].splitlines()[0]) == (
        2500,
        None,
        "2001\tl2001",
    )


def test_write_file_creates_and_overwrites(call: Call, vault_dir: Path) -> None:
    first = call("write_file", path="new/dir/f.md", content="one\n")["data"]
    assert first["message"] == "created new/dir/f.md (4 bytes)"
    second = call("write_file", path="new/dir/f.md", content="two!\n")["data"]
    assert second["message"] == "overwrote new/dir/f.md (5 bytes)"
    assert second["result"]["created"] is False
    assert (vault_dir / "new/dir/f.md").read_text() == "two!\n"
    with pytest.raises(Forbidden):
        call("write_file", path=".obsidian/app.json", content="{}")
    call("write_file", path="daily/2024-03-01.md", content="d\n")
    with pytest.raises(Forbidden):
        call("write_file", path="daily/2024-03-01.md", content="over\n")


def test_edit_move_delete_folder_info(call: Call, vault_dir: Path) -> None:
    edit = call("edit_file", path="notes/a.md", old_text="alpha", new_text="beta")["data"]
    assert edit["message"] == "edited notes/a.md (replace, 1); diff follows"
    assert "+beta line" in edit["result"]["diff"]
    with pytest.raises(Conflict):
        call("edit_file", path="notes/a.md", old_text="alpha", new_text="x")
    (vault_dir / "index.md").write_text("[[a]]\n")
    moved = call("move", source="notes/a.md", destination="kb/b.md")["data"]
    assert moved["message"] == "moved notes/a.md to kb/b.md; links rewritten in 1 files"
    assert (vault_dir / "index.md").read_text() == "[[b]]\n"
    folder = call("create_folder", path="kb")["data"]
    assert folder["message"] == "folder kb already exists"
    info = call("get_file_info", path="KB/B.md")["data"]
    assert (info["path"], info["type"], info["size"]) == ("kb/b.md", "file", 27)
    gone = call("delete", path="kb/b.md")["data"]
    assert gone["message"] == "deleted kb/b.md: moved to .trash/b.md"
    with pytest.raises(NotFound):
        call("get_file_info", path="kb/b.md")


def test_list_and_search(call: Call, vault_dir: Path) -> None:
    (vault_dir / "Projects").mkdir()
    (vault_dir / "Projects/plan.md").write_text("alpha plan\nbeta\n")
    listed = call("list_files", pattern="projects/**")["data"]
    assert listed["files"] == [{"path": "Projects/plan.md", "type": "file", "size_bytes": 16}]
    found = call("search_files", pattern="alpha", file_pattern="*.md")["data"]
    assert [(m["path"], m["line"]) for m in found["matches"]] == [("Projects/plan.md", 1), ("notes/a.md", 3)]
    assert found["message"] == "2 matching lines in 2 files"


def test_every_write_alias_takes_dry_run_and_wait_for_index(call: Call, vault_dir: Path) -> None:
    """SPEC: every write accepts wait_for_index (and dry_run); create_folder is a write too."""
    for name, kind in ALIASES.items():
        if kind == "write":
            fields = CATALOG.named(name).params.model_fields
            assert {"dry_run", "wait_for_index"} <= set(fields), name
    planned = call("create_folder", path="plan/a", dry_run=True)["data"]
    assert planned["message"] == "would create folder plan/a"
    assert not (vault_dir / "plan").exists()
    made = call("create_folder", path="plan/a", wait_for_index=True)["data"]
    assert (made["message"], made["result"]["created"]) == ("created folder plan/a", True)
    assert (vault_dir / "plan/a").is_dir()
