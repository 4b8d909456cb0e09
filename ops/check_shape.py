"""Fails on any function in vault_agent that takes 8 or more parameters (issue 34).

A function with that many inputs wants a request model (STYLE.md; docs/architecture.md).
Parameters are counted as a caller sees them: positional, keyword-only, `*args` and
`**kwargs` each count one; `self` and `cls` do not. The functions that had that many when
the check came in are listed in ALLOWED with the issue that gives them a request model:
the list may only shrink. An entry whose function no longer has that many (or no longer
exists) fails the check too, so it is deleted when the fix lands, and MAX_ALLOWED, its
length that day, is lowered with it.

Usage: python ops/check_shape.py   (exit 1 with one line per problem)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

MAX_PARAMS = 7
MAX_ALLOWED = 19  # never raise it: fix the function instead
# "path:Qualified.name" -> the issue (and item) that gives it a request model
ALLOWED: dict[str, str] = {
    "vault_agent/cli/conversations.py:messages_cmd": "34 item 3",
    "vault_agent/cli/serve.py:serve": "34 item 3",
    "vault_agent/files/content.py:replace_text": "34 item 3",
    "vault_agent/files/edit.py:edit_file": "34 item 3",
    "vault_agent/files/pipeline.py:apply_change": "34 item 3",
    "vault_agent/files/rename_tag.py:rename_tag": "34 item 3",
    "vault_agent/files/write_path.py:write_content": "34 item 3",
    "vault_agent/query/files.py:vault_read": "34 item 3",
    "vault_agent/query/find.py:_run_pass": "34 item 3",
    "vault_agent/query/find.py:vault_find": "34 item 3",
    "vault_agent/query/grep.py:vault_search": "34 item 3",
    "vault_agent/query/grep_snapshot.py:first_lines": "34 item 3",
    "vault_agent/query/scan.py:vault_scan": "34 item 3",
    "vault_agent/query/search.py:ranked_hits": "34 item 3",
    "vault_agent/query/search.py:search": "34 item 3",
    "vault_agent/semantic/embedder.py:SemanticIndexer.__init__": "34 item 4",
    "vault_agent/semantic/evidence.py:lock_reason": "34 item 3",
    "vault_agent/semantic/fusion.py:fuse": "34 item 3",
    "vault_agent/semantic/fusion.py:fuse_explained": "34 item 3",
}


def _count(args: ast.arguments) -> int:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return sum(1 for n in names if n not in ("self", "cls"))


def functions(path: Path, rel: str) -> Iterator[tuple[str, int]]:
    """("rel:Qualified.name", parameter count) of every function and method in one file."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield f"{rel}:{prefix}{child.name}", _count(child.args)
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel), "")


def problems(root: Path, package: str = "vault_agent", allowed: dict[str, str] | None = None) -> list[str]:
    """One line per function over the bound that ALLOWED does not list, per stale entry."""
    allowed = ALLOWED if allowed is None else allowed
    counts = dict(
        found
        for path in sorted((root / package).rglob("*.py"))
        for found in functions(path, path.relative_to(root).as_posix())
    )
    out = [
        f"{name} takes {n} parameters (at most {MAX_PARAMS}): take a request model"
        for name, n in sorted(counts.items())
        if n > MAX_PARAMS and name not in allowed
    ]
    out += [
        f"{name} is allowed (issue {issue}) but takes {counts.get(name, 0)} parameters now: "
        "delete its entry from ALLOWED and lower MAX_ALLOWED"
        for name, issue in sorted(allowed.items())
        if counts.get(name, 0) <= MAX_PARAMS
    ]
    if len(allowed) > MAX_ALLOWED:
        out.append(f"ALLOWED lists {len(allowed)} functions, more than {MAX_ALLOWED}: it may only shrink")
    return out


def main() -> int:
    found = problems(Path(__file__).resolve().parents[1])
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
