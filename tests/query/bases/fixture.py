"""A small synthetic vault as a `Scope`: what bases-run builds from a snapshot, in miniature.

Notes (paths, properties, tags, links) are made up for the Bases help pages' examples; the
clock is fixed (2025-05-27 14:30:15, local) so dates and `relative()` are reproducible.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vault_agent.linkpaths import folder_of
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.formulas import FormulaSet, RowFormulas
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.values import FileInfo, LinkRef, Value

NOW = dt.datetime(2025, 5, 27, 14, 30, 15)


def _ref(target: str, files: Mapping[str, FileInfo]) -> LinkRef:
    return LinkRef(target, _resolve(target, files))


def _resolve(target: str, files: Mapping[str, FileInfo]) -> str | None:
    """Obsidian's rule in short: an exact path (with or without `.md`), else a unique name."""
    for candidate in (target, target + ".md"):
        if candidate in files:
            return candidate
    hits = sorted(p for p in files if p.rsplit("/", 1)[-1] in (target, target + ".md"))
    return hits[0] if hits else None


def _vault() -> dict[str, FileInfo]:
    raw: list[tuple[str, int, dict[str, object], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = [
        (
            "Books/Dune.md",
            2048,
            {
                "price": 12.5,
                "age": 5,
                "status": "reading",
                "rating": 4,
                "author": "[[Frank Herbert]]",
                "tags": ["book", "scifi/classic"],
                "categories": ["[[Books]]"],
                "start_date": dt.date(2025, 5, 1),
                "due_date": dt.date(2025, 5, 20),
                "impact": 6,
                "urgency": 2,
                "effort": 3,
                "first_name": "Paul",
                "last_name": "Atreides",
                "tasks": ["read", "review", "lend"],
                "description": "a desert planet",
                "Due Date": dt.date(2025, 6, 1),
                "quantity": 4,
                "isModified": True,
                "tax": 1.5,
                "discount": 2,
                "part": 3,
                "whole": 12,
                "completed": False,
                "urgent": False,
                "important": True,
                "latitude": 48.85837,
                "longitude": 2.294481,
                "type": "[[Books]]",
                "monthlyUses": 3,
                "radius": 2,
                "date": dt.datetime(2025, 5, 1, 10, 0, 0),
                "datetime": dt.datetime(2025, 5, 2, 18, 45, 30),
                "authors": ["[[Frank Herbert]]", "[[Brian Herbert]]"],
                "property": {"subprop": "nested"},
            },
            ("#book", "#scifi/classic", "#Reading"),
            ("Frank Herbert", "Books", "Textbook"),
            ("cover.jpg",),
        ),
        (
            "Books/Textbook.md",
            512,
            {"price": 80, "age": 0, "status": "done", "tags": "book", "categories": ["[[Books]]"]},
            ("#book",),
            ("Dune",),
            (),
        ),
        ("Frank Herbert.md", 100, {"born": dt.date(1920, 10, 8), "topics": ["[[Books]]"]}, (), ("Dune",), ()),
        ("Books.md", 50, {"icon": "book-open"}, (), (), ()),
        ("Required Reading/Notes/Week 1.md", 300, {}, ("#tag",), ("Books/Dune",), ()),
        ("cover.jpg", 40_000, {}, (), (), ()),
        ("Reading.base", 900, {}, (), (), ()),
    ]
    names = {path: FileInfo(path) for path, *_ in raw}
    files: dict[str, FileInfo] = {}
    for path, size, props, tags, links, embeds in raw:
        files[path] = FileInfo(
            path=path,
            size=size,
            ctime=dt.datetime(2025, 1, 10, 9, 0, 0),
            mtime=dt.datetime(2025, 5, 25, 8, 15, 0),
            tags=tags,
            links=tuple(_ref(t, names) for t in links),
            embeds=tuple(_ref(t, names) for t in embeds),
            properties=props,
        )
    return files


FILES = _vault()


@dataclass
class FixtureScope:
    """A Scope over FILES: a row, `this`, fixed clock, formulas through RowFormulas."""

    row: str = "Books/Dune.md"
    this_path: str | None = "Reading.base"
    formula_texts: Mapping[str, str] = field(default_factory=dict)
    formulas: RowFormulas = field(init=False)

    def __post_init__(self) -> None:
        self.formulas = RowFormulas(FormulaSet.parse(self.formula_texts))

    @property
    def file(self) -> FileInfo:
        return FILES[self.row]

    @property
    def this(self) -> FileInfo | None:
        return FILES[self.this_path] if self.this_path else None

    def now(self) -> dt.datetime:
        return NOW

    def formula(self, name: str, budget: Budget) -> Value:
        return self.formulas.value(name, self, budget)

    def resolve_link(self, target: str, source: str) -> str | None:
        del source  # the fixture's names are unique
        return _resolve(target, FILES)

    def file_info(self, path: str) -> FileInfo | None:
        return FILES.get(path)

    def backlinks(self, path: str) -> Sequence[str]:
        return sorted(p for p, info in FILES.items() if any(ref.path == path for ref in info.links))


def run(text: str, row: str = "Books/Dune.md", **kwargs: object) -> Value:
    """Parse and evaluate `text` on one row of the fixture."""
    scope = FixtureScope(row, **kwargs)  # type: ignore[arg-type]
    return evaluate(parse_expression(text), scope)


__all__ = ["FILES", "NOW", "FixtureScope", "folder_of", "run"]
