"""vault_delete (trash options, suffixes, bytes kept), vault_mkdir, vault_stat."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.ops import CATALOG
from vault_agent.errors import Conflict, Forbidden, InvalidParameter, NotFound

from .conftest import sha, tree

Call = Callable[..., dict[str, Any]]


def _trash_setting(vault_dir: Path, value: str | None) -> None:
    (vault_dir / ".obsidian").mkdir(exist_ok=True)
    body = {} if value is None else {"trashOption": value}
    (vault_dir / ".obsidian/app.json").write_text(json.dumps(body))


def test_delete_to_local_trash_with_suffixes(call: Call, vault_dir: Path) -> None:
    contents = [b"first\n", b"second\n", b"third\n"]
    where = []
    for data in contents:
        (vault_dir / "notes/t.md").write_bytes(data)
        body = call("rm", path="notes/t.md")
        assert body["data"] == {
            "deleted_path": "notes/t.md",
            "type": "file",
            "method": "local",
            "trashed_to": body["data"]["trashed_to"],
            "files": 1,
            "bytes": len(data),
            "deleted": True,
            "dry_run": False,
            "event_seq": body["data"]["event_seq"],
            "snapshot_id": None,
            "indexed": False,
        }
        where.append(body["data"]["trashed_to"])
    assert where == [".trash/t.md", ".trash/t 1.md", ".trash/t 2.md"]
    assert [(vault_dir / w).read_bytes() for w in where] == contents  # every deleted byte kept
    assert not (vault_dir / "notes/t.md").exists()


def test_delete_folder_and_dry_run(call: Call, vault_dir: Path) -> None:
    (vault_dir / "notes/sub").mkdir()
    (vault_dir / "notes/sub/x.md").write_text("x")
    before = tree(vault_dir)
    plan = call("rm", path="notes", dry_run=True)
    assert plan["data"]["trashed_to"] == ".trash/notes"
    assert plan["data"]["files"] == 2
    assert plan["data"]["deleted"] is False
    assert tree(vault_dir) == before
    body = call("rm", path="notes")
    assert body["data"]["type"] == "folder"
    assert body["data"]["bytes"] == len(before["notes/a.md"]) + 1
    assert (vault_dir / ".trash/notes/sub/x.md").read_text() == "x"
    assert (vault_dir / ".trash/notes/a.md").read_bytes() == before["notes/a.md"]


def test_trash_option_none_and_permanent(call: Call, vault_dir: Path) -> None:
    _trash_setting(vault_dir, "none")
    with pytest.raises(Forbidden, match="permanent"):
        call("rm", path="notes/a.md")
    assert (vault_dir / "notes/a.md").exists()
    body = call("rm", path="notes/a.md", permanent=True)
    assert body["data"]["method"] == "permanent"
    assert body["data"]["trashed_to"] is None
    assert not (vault_dir / "notes/a.md").exists()
    assert not (vault_dir / ".trash").exists()


@pytest.mark.parametrize("value", [None, "local", "bogus"])
def test_trash_option_local_default(call: Call, vault_dir: Path, value: str | None) -> None:
    _trash_setting(vault_dir, value)
    assert call("rm", path="notes/a.md")["data"]["trashed_to"] == ".trash/a.md"


def test_trash_option_system(
    call: Call, vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from send2trash import plat_other  # reads XDG_DATA_HOME at import: point it at tmp_path

    xdg = str(tmp_path / "xdg").encode()
    monkeypatch.setattr(plat_other, "XDG_DATA_HOME", xdg)
    monkeypatch.setattr(plat_other, "HOMETRASH_B", xdg + b"/Trash")
    (tmp_path / "xdg").mkdir()
    _trash_setting(vault_dir, "system")
    data = (vault_dir / "notes/a.md").read_bytes()
    body = call("rm", path="notes/a.md")
    assert body["data"]["method"] == "system"
    assert body["data"]["trashed_to"] is None
    assert not (vault_dir / "notes/a.md").exists()
    trashed = list((tmp_path / "xdg").rglob("a.md"))
    assert [p.read_bytes() for p in trashed] == [data]


def test_delete_expected_sha(call: Call, vault_dir: Path) -> None:
    with pytest.raises(Conflict):
        call("rm", path="notes/a.md", expected_sha256="1" * 64)
    assert (vault_dir / "notes/a.md").exists()
    with pytest.raises(InvalidParameter):
        call("rm", path="notes", expected_sha256="1" * 64)
    good = sha((vault_dir / "notes/a.md").read_bytes())
    assert call("rm", path="notes/a.md", expected_sha256=good)["data"]["deleted"] is True


def test_delete_missing(call: Call) -> None:
    with pytest.raises(NotFound):
        call("rm", path="notes/none.md")


def test_mkdir_idempotent(call: Call, vault_dir: Path) -> None:
    first = call("mkdir", path="a/b/c")["data"]
    second = call("mkdir", path="a/b/c")["data"]
    assert (first["created"], second["created"]) == (True, False)
    assert first["path"] == second["path"] == "a/b/c"
    assert (vault_dir / "a/b/c").is_dir()
    with pytest.raises(Conflict):
        call("mkdir", path="notes/a.md")
    plan = call("mkdir", path="q/r", dry_run=True)["data"]
    assert plan == {
        "path": "q/r",
        "created": True,
        "dry_run": True,
        "event_seq": None,
        "snapshot_id": None,
        "indexed": False,
    }
    assert not (vault_dir / "q").exists()


def test_stat_file_and_folder(call: Call, vault_dir: Path) -> None:
    data = call("info", path="Notes/A.MD")["data"]
    raw = (vault_dir / "notes/a.md").read_bytes()
    assert data["path"] == "notes/a.md"
    assert (data["type"], data["size_bytes"], data["entries"], data["sha256"]) == (
        "file",
        len(raw),
        None,
        sha(raw),
    )
    assert data["modified"].endswith("Z")
    assert data["created"] is None or data["created"].endswith("Z")
    folder = call("info", path="notes")["data"]
    assert (folder["type"], folder["size_bytes"], folder["entries"], folder["sha256"]) == (
        "folder",
        None,
        1,
        None,
    )
    with pytest.raises(NotFound):
        call("info", path="nope.md")


def test_stat_entries_count_what_an_agent_can_see(call: Call, vault_dir: Path) -> None:
    """Protected folders (any depth, any case) and vault-agent temp files are not counted."""
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / "notes" / ".Git").mkdir()
    (vault_dir / "notes" / ".vault-agent-tmp-0123456789abcdef0123456789abcdef").write_text("t")
    assert call("info", path="notes")["data"]["entries"] == 1
    assert call("info", path="")["data"]["entries"] == 2  # notes, .system


def test_stat_is_read_tool(vault_dir: Path) -> None:
    from vault_agent.api.invoke import invoke

    from .conftest import make_ctx

    ctx = make_ctx(vault_dir, writes=False)
    assert invoke(CATALOG.named("info"), ctx, {"path": "notes/a.md"}).data.type == "file"
