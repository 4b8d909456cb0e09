"""Bounded unified diffs of a change (what an agent sees of its own edit)."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 400
MAX_DIFF_CHARS = 20_000


def _text(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified(
    rel: str, before: bytes | None, after: bytes | None, context: int = 3, max_chars: int = MAX_DIFF_CHARS
) -> tuple[str, bool]:
    """(diff text, truncated): `a/<rel>` → `b/<rel>`, `/dev/null` for a missing side;
    cut at MAX_DIFF_LINES lines or `max_chars` characters."""
    old = _text(before)
    new = _text(after)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile=f"a/{rel}" if before is not None else "/dev/null",
        tofile=f"b/{rel}" if after is not None else "/dev/null",
        n=context,
    )
    out: list[str] = []
    chars = 0
    truncated = False
    for i, line in enumerate(lines):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if i >= MAX_DIFF_LINES or chars + len(line) > max_chars:
            truncated = True
            break
        out.append(line)
        chars += len(line)
    return "".join(out), truncated
