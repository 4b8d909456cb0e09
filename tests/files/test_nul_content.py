"""NUL is refused in written text by every write tool of both profiles, before any I/O."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.errors import InvalidParameter

from .conftest import tree

NUL = "a\x00b"
CASES = [
    ("create", {"path": "notes/new.md", "content": NUL}, "content"),
    ("write", {"path": "notes/a.md", "content": NUL, "mode": "overwrite"}, "content"),
    ("write", {"path": "notes/a.md", "content": NUL, "mode": "append"}, "content"),
    ("replace", {"path": "notes/a.md", "find": "alpha", "replace": NUL}, "replace"),
    ("edit", {"path": "notes/a.md", "old_text": "alpha", "new_text": NUL}, "new_text"),
    ("edit", {"path": "notes/a.md", "insert_after_line": 1, "content": NUL}, "content"),
    ("write_file", {"path": "notes/a.md", "content": NUL}, "content"),  # agent-files profile
    ("edit_file", {"path": "notes/a.md", "old_text": "alpha", "new_text": NUL}, "new_text"),
    ("edit_file", {"path": "notes/a.md", "insert_before_line": 1, "content": NUL}, "content"),
]


@pytest.mark.parametrize(("tool", "args", "param"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_nul_in_written_text_is_invalid_parameter(
    call: Callable[..., dict[str, Any]], vault_dir: Path, tool: str, args: dict[str, Any], param: str
) -> None:
    before = tree(vault_dir)
    with pytest.raises(InvalidParameter) as caught:
        call(tool, **args)
    assert (
        caught.value.message
        == f"parameter '{param}' contains a NUL character (U+0000); notes are text, remove it"
    )
    assert tree(vault_dir) == before
