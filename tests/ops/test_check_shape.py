"""ops/check_shape.py, the check that no function in vault_agent takes 8 or more parameters
and no class is over 250 lines (issue 34): it passes on the tree, fails where it must, and
an allow-list entry that is no longer over its bound is a note, not a failure."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ops"))

import check_shape  # noqa: E402 - needs the path above

REPO = Path(__file__).resolve().parents[2]


def test_the_tree_passes() -> None:
    assert check_shape.check(REPO).problems == []


def _package(tmp_path: Path, source: str) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(source, encoding="utf-8")
    return tmp_path


def test_eight_parameters_fail_and_seven_pass(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        "def seven(a, b, c, d, e, f, g): ...\n"
        "def eight(a, b, c, d, e, f, g, *, h): ...\n"
        "def starred(a, b, c, d, e, f, *args, **kwargs): ...\n"
        "class K:\n"
        "    def method(self, a, b, c, d, e, f, g): ...\n"
        "    @classmethod\n"
        "    def maker(cls, a, b, c, d, e, f, g, h): ...\n",
    )
    assert check_shape.check(root, "pkg", {}, {}).problems == [
        "pkg/mod.py:K.maker takes 8 parameters (at most 7): take a request model",
        "pkg/mod.py:eight takes 8 parameters (at most 7): take a request model",
        "pkg/mod.py:starred takes 8 parameters (at most 7): take a request model",
    ]


def test_a_class_over_250_lines_fails(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(249))
    root = _package(tmp_path, f"class Fits:\n{body}\nclass Long:\n{body}    y = 0\n")
    assert check_shape.check(root, "pkg", {}, {}).problems == [
        "pkg/mod.py:Long is 251 lines (at most 250): give its jobs their own classes"
    ]
    assert check_shape.check(root, "pkg", {}, {"pkg/mod.py:Long": "why"}).problems == []


def test_a_listed_entry_no_longer_over_is_a_note(tmp_path: Path) -> None:
    root = _package(tmp_path, "def eight(a, b, c, d, e, f, g, h): ...\ndef fixed(request): ...\n")
    listed = {"pkg/mod.py:eight": "why", "pkg/mod.py:fixed": "why", "pkg/other.py:gone": "why"}
    shape = check_shape.check(root, "pkg", listed, {})
    assert shape.problems == []
    assert [n.split()[1] for n in shape.notes] == ["pkg/mod.py:fixed", "pkg/other.py:gone"]


def test_every_entry_gives_a_reason() -> None:
    for listed in (check_shape.WIDE_FUNCTIONS, check_shape.LONG_CLASSES):
        assert all(":" in name and len(reason) > 20 for name, reason in listed.items())
