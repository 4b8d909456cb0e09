"""vault_edit: exactly one form per call, each form's rules, diffs, CRLF files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.errors import Conflict, InvalidParameter, NotFound
from vault_agent.files.edit import split_lines

from .conftest import sha, tree

Call = Callable[..., dict[str, Any]]
TEXT = "one\ntwo\nthree\ntwo\n"


@pytest.fixture
def note(vault_dir: Path) -> Path:
    p = vault_dir / "notes/e.md"
    p.write_text(TEXT)
    return p


def test_split_lines() -> None:
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\n") == ["a\n"]
    assert split_lines("a\r\nb") == ["a\r\n", "b"]
    assert split_lines("a\u2028b\n") == ["a\u2028b\n"]  # only '\n' splits (vault_read numbering)


def test_replace_unique(call: Call, note: Path) -> None:
    body = call("edit", path="notes/e.md", old_text="three", new_text="3")
    data = body["data"]
    assert note.read_text() == "one\ntwo\n3\ntwo\n"
    assert data["operation"] == "replace"
    assert data["replacements"] == 1
    assert data["diff"] == (
        "--- a/notes/e.md\n+++ b/notes/e.md\n@@ -1,4 +1,4 @@\n one\n two\n-three\n+3\n two\n"
    )
    assert data["sha256"] == sha(note.read_bytes())
    assert data["size_bytes"] == len(note.read_bytes())


def test_replace_ambiguous_needs_replace_all(call: Call, note: Path) -> None:
    with pytest.raises(Conflict, match="2 times"):
        call("edit", path="notes/e.md", old_text="two", new_text="2")
    assert note.read_text() == TEXT
    body = call("edit", path="notes/e.md", old_text="two", new_text="2", replace_all=True)
    assert body["data"]["replacements"] == 2
    assert note.read_text() == "one\n2\nthree\n2\n"


def test_replace_absent_is_conflict(call: Call, note: Path) -> None:
    with pytest.raises(Conflict, match="not found"):
        call("edit", path="notes/e.md", old_text="four", new_text="4")
    assert note.read_text() == TEXT


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"insert_after_line": 0, "content": "zero"}, "zero\none\ntwo\nthree\ntwo\n"),
        ({"insert_after_line": 4, "content": "five\n"}, TEXT + "five\n"),
        ({"insert_before_line": 2, "content": "1.5\n1.7"}, "one\n1.5\n1.7\ntwo\nthree\ntwo\n"),
        ({"insert_before_line": 5, "content": "end"}, TEXT + "end\n"),
        ({"delete_lines": {"start_line": 2, "end_line": 3}}, "one\ntwo\n"),
        ({"delete_lines": {"start_line": 1, "end_line": 4}}, ""),
    ],
)
def test_line_forms(call: Call, note: Path, kw: dict[str, Any], expected: str) -> None:
    call("edit", path="notes/e.md", **kw)
    assert note.read_text() == expected


def test_insert_after_last_line_without_newline(call: Call, vault_dir: Path) -> None:
    p = vault_dir / "notes/n.md"
    p.write_text("a\nb")
    body = call("edit", path="notes/n.md", insert_after_line=2, content="c")
    assert p.read_text() == "a\nb\nc\n"
    assert body["data"]["replacements"] == 1


def test_crlf_preserved(call: Call, vault_dir: Path) -> None:
    p = vault_dir / "notes/w.md"
    p.write_bytes(b"a\r\nb\r\nc\r\n")
    call("edit", path="notes/w.md", insert_after_line=1, content="x\ny")
    assert p.read_bytes() == b"a\r\nx\r\ny\r\nb\r\nc\r\n"
    call("edit", path="notes/w.md", old_text="y\nb", new_text="Y\nB")
    assert p.read_bytes() == b"a\r\nx\r\nY\r\nB\r\nc\r\n"


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"old_text": "one"},
        {"new_text": "x"},
        {"old_text": "", "new_text": "x"},
        {"old_text": "one", "new_text": "1", "insert_after_line": 1, "content": "x"},
        {"old_text": "one", "new_text": "1", "delete_lines": {"start_line": 1, "end_line": 1}},
        {"insert_after_line": 1},
        {"content": "x"},
        {"insert_after_line": 1, "insert_before_line": 1, "content": "x"},
        {"insert_after_line": 5, "content": "x"},
        {"insert_after_line": -1, "content": "x"},
        {"insert_before_line": 0, "content": "x"},
        {"insert_before_line": 6, "content": "x"},
        {"delete_lines": {"start_line": 0, "end_line": 1}},
        {"delete_lines": {"start_line": 3, "end_line": 2}},
        {"delete_lines": {"start_line": 4, "end_line": 5}},
        {"delete_lines": {"start_line": 1}},
    ],
)
def test_invalid_forms_touch_nothing(call: Call, note: Path, vault_dir: Path, kw: dict[str, Any]) -> None:
    before = tree(vault_dir)
    with pytest.raises(InvalidParameter):
        call("edit", path="notes/e.md", **kw)
    assert tree(vault_dir) == before


def test_dry_run_returns_diff_only(call: Call, note: Path) -> None:
    body = call("edit", path="notes/e.md", delete_lines={"start_line": 1, "end_line": 1}, dry_run=True)
    assert body["data"]["dry_run"] is True
    assert (
        body["data"]["diff"]
        == "--- a/notes/e.md\n+++ b/notes/e.md\n@@ -1,4 +1,3 @@\n-one\n two\n three\n two\n"
    )
    assert body["data"]["event_seq"] is None
    assert note.read_text() == TEXT


def test_expected_sha(call: Call, note: Path) -> None:
    with pytest.raises(Conflict):
        call("edit", path="notes/e.md", old_text="one", new_text="1", expected_sha256="0" * 64)
    assert note.read_text() == TEXT
    body = call("edit", path="notes/e.md", old_text="one", new_text="1", expected_sha256=sha(TEXT.encode()))
    call("edit", path="notes/e.md", old_text="1", new_text="I", expected_sha256=body["data"]["sha256"])
    assert note.read_text() == "I\ntwo\nthree\ntwo\n"


def test_missing_file(call: Call) -> None:
    with pytest.raises(NotFound):
        call("edit", path="notes/none.md", old_text="a", new_text="b")


def test_diff_is_bounded(call: Call, vault_dir: Path) -> None:
    p = vault_dir / "notes/big.md"
    p.write_text("".join(f"line {i}\n" for i in range(3000)))
    body = call("edit", path="notes/big.md", delete_lines={"start_line": 1, "end_line": 3000})
    assert body["data"]["diff_truncated"] is True
    assert len(body["data"]["diff"].splitlines()) <= 400
    assert p.read_text() == ""


def test_insert_at_top_keeps_bom_first(call: Call, vault_dir: Path) -> None:
    p = vault_dir / "notes/bom.md"
    p.write_bytes(b"\xef\xbb\xbfa\n")
    call("edit", path="notes/bom.md", insert_after_line=0, content="top")
    assert p.read_bytes() == b"\xef\xbb\xbftop\na\n"
