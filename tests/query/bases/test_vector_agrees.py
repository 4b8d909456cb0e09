"""The masks answered from vault_query's columns never disagree with the interpreter.

For any statement built from the shapes vector.py answers (tags, folders, property and
file-field comparisons with literals of every type, `!`, `&&`, `||`), over notes holding
every kind of value (numbers, numeric text, dates, date-times, wikilink text, lists, maps,
nulls, keys in another letter case or folding to the same name), a note the masks call
certainly true must evaluate to true (without an error), and certainly false to false.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query.bases.runkit import Runner, copy_fixture

from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_errors import ExpressionError
from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.formulas import FormulaSet
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.row_scope import RunContext
from vault_agent.query.bases.rows import Needs, SnapshotRows
from vault_agent.query.bases.values import truthy
from vault_agent.query.bases.vector import Vectors

EDGES = {
    "Edge/Mixed.md": (
        "---\nStatus: Done\nrating: '4'\nprice: .nan\ntags: urgent book\n"
        "due_date: 2025-05-01T10:00:00\nauthor: null\nage: [1, 2]\nurgent: yes\n---\nx\n"
    ),
    "Edge/Link.md": "---\nstatus: '[[Done]]'\nrating: 4.0\nprice: -1\ndue_date: '2025-05-20'\nage: {a: 1}\n---\n",
    "Edge/Folded.md": "---\nstatus!: done\nDue Date: 2025-05-20\nrating: true\nprice: 1e400\n---\n",
    "Edge/Empty.md": "---\nstatus: ''\nrating:\ntags: []\nage: []\n---\n",
    "edge/lower.md": "---\nstatus: DONE\nrating: 10\n---\n#Book #book/deep\n",
}
PROPS = ["status", "Status", "rating", "price", "due_date", "tags", "author", "note.status", 'note["Due Date"]',
         "missing", "age", "urgent"]  # fmt: skip
LITERALS = ['"done"', '"Done"', '"4"', "4", "3.5", "0", "-1", "true", "false", "null", '"2025-05-01"',
            '"2025-05-20T10:00"', '""', '"[[Done]]"', '"urgent"']  # fmt: skip
FIELDS = ["file.name", "file.path", "file.folder", "file.ext", "file.basename", "file.size"]
FIELD_LITERALS = ['"Dune.md"', '"Books"', '"md"', '"/"', '"Edge/Link.md"', "100", '"500"', "null", '"b"']
OPS = ["==", "!=", "<", "<=", ">", ">="]
TAGS = ['"book"', '"#Book"', '"scifi"', '"urgent"', '"book/deep"', '""', '"BOOK"']
FOLDERS = ['"Books"', '"books"', '"Edge"', '"/"', '""', '"Required Reading/Notes"', '"Edge/"']


def _leaf() -> st.SearchStrategy[str]:
    prop = st.builds(
        lambda p, o, v: f"{p} {o} {v}",
        st.sampled_from(PROPS),
        st.sampled_from(OPS),
        st.sampled_from(LITERALS),
    )
    flipped = st.builds(
        lambda p, o, v: f"{v} {o} {p}",
        st.sampled_from(PROPS),
        st.sampled_from(OPS),
        st.sampled_from(LITERALS),
    )
    field = st.builds(
        lambda f, o, v: f"{f} {o} {v}",
        st.sampled_from(FIELDS),
        st.sampled_from(OPS),
        st.sampled_from(FIELD_LITERALS),
    )
    tag = st.builds(lambda a, b: f"file.hasTag({a}, {b})", st.sampled_from(TAGS), st.sampled_from(TAGS))
    contains = st.builds(lambda a: f"file.tags.contains({a})", st.sampled_from(TAGS))
    folder = st.builds(lambda f: f"file.inFolder({f})", st.sampled_from(FOLDERS))
    other = st.sampled_from(
        ['status.lower() == "done"', "price", "rating * 2 > 5"]
    )  # left to the interpreter
    return st.one_of(prop, flipped, field, tag, contains, folder, other)


STATEMENTS = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.builds(lambda a: f"!({a})", inner),
        st.builds(lambda a, b: f"({a}) && ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) || ({b})", inner, inner),
    ),
    max_leaves=4,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SnapshotRows, RunContext]]:
    settings = copy_fixture(tmp_path_factory.mktemp("vector") / "vault", EDGES)
    runner = Runner(settings)
    try:
        with runner.reader.acquire() as view:
            rows = SnapshotRows(runner.reader, view, {})
            context = RunContext(
                rows, Needs(links=True), None, dt.datetime(2025, 5, 27, 14, 30), FormulaSet.parse({}), {}
            )
            yield rows, context
    finally:
        runner.close()


def _interpreted(context: RunContext, text: str, position: int) -> Any:
    try:
        return truthy(evaluate(parse_expression(text), context.scope(position), budget=Budget()))
    except ExpressionError:
        return "error"


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=STATEMENTS)
def test_certain_masks_agree_with_the_interpreter(world: tuple[SnapshotRows, RunContext], text: str) -> None:
    rows, context = world
    yes, no = Vectors(rows).expression(parse_expression(text))
    assert not (yes & no).any()
    for position in np.flatnonzero(yes | no).tolist():
        want = bool(yes[position])
        got = _interpreted(context, text, position)
        assert got == want, (text, rows.paths[position], got, want)


def test_the_masks_settle_most_notes(world: tuple[SnapshotRows, RunContext]) -> None:
    """The shapes the columns answer are settled for every plain note (here, all but the edges)."""
    rows, _ = world
    vectors = Vectors(rows)
    plain = np.asarray([not p.lower().startswith("edge/") for p in rows.paths])
    for text in ('file.hasTag("book")', 'status != "done"', "rating > 3", 'file.inFolder("Books")',
                 'due_date < "2025-06-01"', 'file.name == "Dune.md"'):  # fmt: skip
        yes, no = vectors.expression(parse_expression(text))
        assert (yes | no)[plain].all(), text
