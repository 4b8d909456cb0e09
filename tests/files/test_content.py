"""vault_create / vault_write / vault_replace: seed 002 schemas, preconditions, dry runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.errors import Conflict, InvalidParameter, InvalidPath, NotFound, TooLarge

from .conftest import sha, tree

Call = Callable[..., dict[str, Any]]
A = "# A\n\nalpha line\nsecond line\n"


def _data(body: dict[str, Any]) -> dict[str, Any]:
    data = dict(body["data"])
    data.pop("event_seq")  # log seq: asserted separately where it matters
    return data


def test_create_new_file_with_parents(call: Call, vault_dir: Path) -> None:
    body = call("create", path="projects/new/idea.md", content="# Idea\n")
    assert _data(body) == {
        "written_path": "projects/new/idea.md",
        "written_bytes": 7,
        "size_bytes": 7,
        "sha256": sha(b"# Idea\n"),
        "created": True,
        "changed": True,
        "dry_run": False,
        "diff": None,
        "diff_truncated": False,
        "snapshot_id": None,
        "indexed": False,
    }
    assert body["warnings"] == []
    assert isinstance(body["data"]["event_seq"], int)
    assert (vault_dir / "projects/new/idea.md").read_bytes() == b"# Idea\n"


def test_create_existing_is_conflict_and_untouched(call: Call, vault_dir: Path) -> None:
    before = tree(vault_dir)
    with pytest.raises(Conflict):
        call("create", path="notes/a.md", content="x")
    assert tree(vault_dir) == before


def test_create_dry_run_touches_nothing(call: Call, vault_dir: Path) -> None:
    before = tree(vault_dir)
    body = call("create", path="deep/er/x.md", content="one\n", dry_run=True)
    assert body["data"]["dry_run"] is True
    assert body["data"]["diff"] == "--- /dev/null\n+++ b/deep/er/x.md\n@@ -0,0 +1 @@\n+one\n"
    assert body["data"]["event_seq"] is None
    assert tree(vault_dir) == before
    assert not (vault_dir / "deep").exists()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("append", A + "more\n"), ("overwrite", "more\n")],
)
def test_write_modes(call: Call, vault_dir: Path, mode: str, expected: str) -> None:
    body = call("write", path="notes/a.md", content="more\n", mode=mode)
    assert body["data"]["written_bytes"] == 5
    assert body["data"]["size_bytes"] == len(expected.encode())
    assert body["data"]["sha256"] == sha(expected.encode())
    assert (vault_dir / "notes/a.md").read_text() == expected


@pytest.mark.parametrize("mode", ["prepend", "APPEND", "", "replace", None])
def test_unknown_mode_rejected_before_io(call: Call, vault_dir: Path, mode: Any) -> None:
    before = tree(vault_dir)
    with pytest.raises(InvalidParameter):
        call("write", path="notes/a.md", content="x", mode=mode)
    assert tree(vault_dir) == before


def test_write_missing_mode_rejected(call: Call) -> None:
    with pytest.raises(InvalidParameter, match="mode"):
        call("write", path="notes/a.md", content="x")


def test_write_missing_file_is_conflict(call: Call, vault_dir: Path) -> None:
    with pytest.raises(Conflict, match="vault_create"):
        call("write", path="notes/nope.md", content="x", mode="append")
    assert not (vault_dir / "notes/nope.md").exists()


def test_write_expected_sha_guard(call: Call, vault_dir: Path) -> None:
    good = sha(A.encode())
    call("write", path="notes/a.md", content="B\n", mode="append", expected_sha256=good)
    before = tree(vault_dir)
    with pytest.raises(Conflict, match="changed since it was read"):
        call("write", path="notes/a.md", content="C\n", mode="append", expected_sha256=good)
    assert tree(vault_dir) == before
    with pytest.raises(InvalidParameter, match="64 hexadecimal"):
        call("write", path="notes/a.md", content="C\n", mode="append", expected_sha256="abc")


def test_write_same_bytes_is_unchanged(call: Call) -> None:
    body = call("write", path="notes/a.md", content=A, mode="overwrite")
    assert body["data"]["changed"] is False
    assert body["data"]["event_seq"] is None


def test_write_dry_run_diff(call: Call, vault_dir: Path) -> None:
    body = call("write", path="notes/a.md", content="tail\n", mode="append", dry_run=True)
    assert body["data"]["diff"] == (
        "--- a/notes/a.md\n+++ b/notes/a.md\n@@ -2,3 +2,4 @@\n \n alpha line\n second line\n+tail\n"
    )
    assert (vault_dir / "notes/a.md").read_text() == A


def test_replace_more_occurrences_than_max_replacements_is_conflict(call: Call, vault_dir: Path) -> None:
    """SPEC (issue 8 item 8): more occurrences than max_replacements (default 1) → CONFLICT,
    nothing changed, the count in the message; within the cap every occurrence is replaced."""
    (vault_dir / "notes/r.md").write_text("x y x z x\n")
    before = (vault_dir / "notes/r.md").stat().st_mtime_ns
    for cap in (None, 2):
        args = {} if cap is None else {"max_replacements": cap}
        with pytest.raises(Conflict, match="occurs 3 times") as info:
            call("replace", path="notes/r.md", find="x", replace="w", **args)
        assert "nothing was replaced" in info.value.message
    assert (vault_dir / "notes/r.md").read_text() == "x y x z x\n"
    assert (vault_dir / "notes/r.md").stat().st_mtime_ns == before
    body = call("replace", path="notes/r.md", find="x", replace="v", max_replacements=5)
    assert (body["data"]["replacements"], body["warnings"]) == (3, [])
    assert (vault_dir / "notes/r.md").read_text() == "v y v z v\n"


def test_replace_counts_and_limits(call: Call, vault_dir: Path) -> None:
    (vault_dir / "notes/r.md").write_text("x y x z x\n")
    body = call("replace", path="notes/r.md", find="x", replace="w", max_replacements=3)
    assert body["data"]["replacements"] == 3
    assert body["data"]["written_path"] == "notes/r.md"
    assert (vault_dir / "notes/r.md").read_text() == "w y w z w\n"
    with pytest.raises(Conflict, match="does not occur"):
        call("replace", path="notes/r.md", find="x", replace="w")


def test_replace_single_default(call: Call, vault_dir: Path) -> None:
    body = call("replace", path="notes/a.md", find="alpha", replace="ALPHA")
    assert body["data"]["replacements"] == 1
    assert (vault_dir / "notes/a.md").read_text() == A.replace("alpha", "ALPHA")


@pytest.mark.parametrize(("find", "limit"), [("", None), ("a", 0), ("a", -1)])
def test_replace_bad_parameters(call: Call, find: str, limit: int | None) -> None:
    with pytest.raises(InvalidParameter):
        call("replace", path="notes/a.md", find=find, replace="b", max_replacements=limit)


def test_replace_missing_file(call: Call) -> None:
    with pytest.raises(NotFound):
        call("replace", path="notes/none.md", find="a", replace="b")


def test_replace_non_utf8_refused(call: Call, vault_dir: Path) -> None:
    (vault_dir / "notes/bin.md").write_bytes(b"\xff\xfe abc")
    with pytest.raises(InvalidParameter, match="not UTF-8"):
        call("replace", path="notes/bin.md", find="abc", replace="d")
    assert (vault_dir / "notes/bin.md").read_bytes() == b"\xff\xfe abc"


def test_content_cap(call: Call) -> None:
    with pytest.raises(TooLarge):
        call("create", path="big.md", content="x" * (8 * 1024 * 1024 + 1))


def test_mode_preserved_and_no_temp_left(call: Call, vault_dir: Path) -> None:
    target = vault_dir / "notes/a.md"
    target.chmod(0o600)
    call("write", path="notes/a.md", content="z\n", mode="append")
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in (vault_dir / "notes").iterdir()] == ["a.md"]


def test_writes_use_exact_name_never_case_variant(call: Call, vault_dir: Path) -> None:
    with pytest.raises(Conflict):
        call("write", path="NOTES/A.md", content="x", mode="append")
    assert (vault_dir / "notes/a.md").read_text() == A


@pytest.mark.parametrize("name", ["create", "write", "replace"])
def test_folder_path_is_invalid(call: Call, name: str) -> None:
    raw = {
        "create": {"content": "x"},
        "write": {"content": "x", "mode": "append"},
        "replace": {"find": "a", "replace": "b"},
    }
    with pytest.raises(InvalidPath, match="folder"):
        call(name, path="notes", **raw[name])
