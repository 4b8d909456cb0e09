"""Fails on a function in vault_agent that takes 8 or more parameters, or a class over 250
lines (issue 34; STYLE.md): such a function wants a request model, such a class more than
one job.

Parameters are counted as a caller sees them: positional, keyword-only, `*args` and
`**kwargs` each count one; `self` and `cls` do not. A class's lines run from its `class`
line to its last line. What was over a bound when the check came in is listed below, each
with its reason and the issue item that fixes it: the lists only shrink. An entry that is no
longer over its bound (fixed, renamed, or code another branch has not merged yet) is printed
as a note, not a failure, so a branch that fixes one does not break the gate for the others;
delete the entry when you see its note.

Usage: python ops/check_shape.py   (exit 1 with one line per problem; notes do not fail)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

MAX_PARAMS = 7
MAX_CLASS_LINES = 250

# "path:Qualified.name" -> why it still has 8+ parameters, and what gives it a request model
WIDE_FUNCTIONS: dict[str, str] = {}

# "path:ClassName" -> why it is still over 250 lines, and what splits it
LONG_CLASSES: dict[str, str] = {}


@dataclass
class Shape:
    """What the check found: problems fail it, notes do not."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _count(args: ast.arguments) -> int:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return sum(1 for n in names if n not in ("self", "cls"))


def measures(path: Path, rel: str) -> Iterator[tuple[str, str, int]]:
    """("function" | "class", "rel:Qualified.name", parameters | lines) of one file."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                yield "class", f"{rel}:{prefix}{child.name}", lines
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield "function", f"{rel}:{prefix}{child.name}", _count(child.args)
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel), "")


def check(
    root: Path,
    package: str = "vault_agent",
    wide: Mapping[str, str] | None = None,
    long: Mapping[str, str] | None = None,
) -> Shape:
    """The problems (over a bound and not listed) and notes (listed, not over) of `package`."""
    bounds = {
        "function": (
            MAX_PARAMS,
            WIDE_FUNCTIONS if wide is None else wide,
            "takes {n} parameters (at most {max}): take a request model",
        ),
        "class": (
            MAX_CLASS_LINES,
            LONG_CLASSES if long is None else long,
            "is {n} lines (at most {max}): give its jobs their own classes",
        ),
    }
    found: dict[str, dict[str, int]] = {"function": {}, "class": {}}
    for path in sorted((root / package).rglob("*.py")):
        for kind, name, n in measures(path, path.relative_to(root).as_posix()):
            found[kind][name] = n
    shape = Shape()
    for kind, (bound, listed, wording) in bounds.items():
        counts = found[kind]
        shape.problems += [
            f"{name} {wording.format(n=n, max=bound)}"
            for name, n in sorted(counts.items())
            if n > bound and name not in listed
        ]
        shape.notes += [
            f"note: {name} is listed in ops/check_shape.py but is not over the bound here: delete its entry once it is fixed on main"
            for name in sorted(listed)
            if counts.get(name, 0) <= bound
        ]
    return shape


def main() -> int:
    shape = check(Path(__file__).resolve().parents[1])
    for line in (*shape.notes, *shape.problems):
        print(line)
    return 1 if shape.problems else 0


if __name__ == "__main__":
    sys.exit(main())
