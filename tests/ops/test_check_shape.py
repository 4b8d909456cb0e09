"""ops/check_shape.py, the check that no function in vault_agent takes 8 or more parameters
(issue 34): it passes on the tree, and fails where it must."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ops"))

import check_shape  # noqa: E402 - needs the path above

REPO = Path(__file__).resolve().parents[2]


def test_the_tree_passes() -> None:
    assert check_shape.problems(REPO) == []


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
    assert check_shape.problems(root, "pkg", {}) == [
        "pkg/mod.py:K.maker takes 8 parameters (at most 7): take a request model",
        "pkg/mod.py:eight takes 8 parameters (at most 7): take a request model",
        "pkg/mod.py:starred takes 8 parameters (at most 7): take a request model",
    ]


def test_the_allowlist_only_shrinks(tmp_path: Path) -> None:
    root = _package(tmp_path, "def eight(a, b, c, d, e, f, g, h): ...\ndef fixed(request): ...\n")
    assert check_shape.problems(root, "pkg", {"pkg/mod.py:eight": "34"}) == []
    stale = check_shape.problems(root, "pkg", {"pkg/mod.py:eight": "34", "pkg/mod.py:fixed": "34"})
    assert stale == [
        "pkg/mod.py:fixed is allowed (issue 34) but takes 1 parameters now: "
        "delete its entry from ALLOWED and lower MAX_ALLOWED"
    ]
    assert len(check_shape.ALLOWED) <= check_shape.MAX_ALLOWED
    many = {f"pkg/mod.py:eight{i}": "34" for i in range(check_shape.MAX_ALLOWED + 1)}
    assert any("it may only shrink" in p for p in check_shape.problems(root, "pkg", many))
