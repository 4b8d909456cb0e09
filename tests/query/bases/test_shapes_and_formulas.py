"""Filter shapes for vault_query's plan (they agree with the interpreter), property ids, and
formulas evaluated once per row."""

from __future__ import annotations

from typing import Any

import pytest
from query.bases.fixture import FILES, FixtureScope

from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.compare import compare, equals
from vault_agent.query.bases.expr_errors import EvaluationError, ExpressionSyntaxError, Unsupported
from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.formulas import FormulaSet, RowFormulas
from vault_agent.query.bases.functions_types import in_folder
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.scope import property_value
from vault_agent.query.bases.shapes import (
    Comparison,
    FolderFilter,
    Negated,
    PropertyRef,
    Shape,
    TagFilter,
    property_id,
    property_ref,
    simple_filter,
)
from vault_agent.query.bases.values import Value, tag_matches, truthy


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ('file.hasTag("book", "#scifi")', TagFilter(("book", "#scifi"))),
        ('file.tags.contains("book")', TagFilter(("book",))),
        ('file.inFolder("Books")', FolderFilter("Books")),
        ('!file.inFolder("Books")', Negated(FolderFilter("Books"))),
        ('status == "done"', Comparison(PropertyRef("note", "status"), "==", "done")),
        ('note["Due Date"] != null', Comparison(PropertyRef("note", "Due Date"), "!=", None)),
        ("rating > 3", Comparison(PropertyRef("note", "rating"), ">", 3.0)),
        ("3 < rating", Comparison(PropertyRef("note", "rating"), ">", 3.0)),
        ("price >= -2", Comparison(PropertyRef("note", "price"), ">=", -2.0)),
        ('file.ext == "md"', Comparison(PropertyRef("file", "ext"), "==", "md")),
        ("formula.ppu > 5", Comparison(PropertyRef("formula", "ppu"), ">", 5.0)),
        ("done == true", Comparison(PropertyRef("note", "done"), "==", True)),
    ],
)
def test_simple_shapes(text: str, shape: Shape) -> None:
    assert simple_filter(parse_expression(text)) == shape


@pytest.mark.parametrize(
    "text",
    ['file.hasTag(x)', "file.inFolder()", "a == b", 'file.mtime > now() - "1d"', 'tags.contains("a")',
     'file.hasTag("a") && rating > 3', "rating + 1 > 3", 'list(type).contains(this)'],
)  # fmt: skip
def test_everything_else_is_evaluated_per_row(text: str) -> None:
    assert simple_filter(parse_expression(text)) is None


def _shape_holds(shape: Shape, scope: FixtureScope) -> bool:
    """The shape's meaning computed without the interpreter (what a plan predicate does)."""
    info = scope.file
    if isinstance(shape, Negated):
        return not _shape_holds(shape.inner, scope)
    if isinstance(shape, TagFilter):
        return any(tag_matches(tag, want) for tag in info.tags for want in shape.tags)
    if isinstance(shape, FolderFilter):
        return in_folder(info.path, shape.folder)
    assert isinstance(shape, Comparison)
    if shape.ref.namespace == "file":
        have: Value = {"ext": info.ext, "name": info.name}[shape.ref.name]
    else:
        have = property_value(info, shape.ref.name, scope)
    value: Value = (
        float(shape.value)
        if isinstance(shape.value, int) and not isinstance(shape.value, bool)
        else shape.value
    )
    if shape.op == "==":
        return equals(have, value)
    if shape.op == "!=":
        return not equals(have, value)
    order = compare(have, value)
    return (
        order is not None and {"<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0}[shape.op]
    )


@pytest.mark.parametrize(
    "text",
    ['file.hasTag("book")', 'file.hasTag("SCIFI", "tag")', '!file.hasTag("book")', 'file.tags.contains("reading")',
     'file.inFolder("Books")', 'file.inFolder("Required Reading")', 'status == "done"', 'status != "done"',
     "price > 20", "rating >= 4", "age < 1", 'file.ext == "md"', "price == null", "!(price > 20)"],
)  # fmt: skip
def test_shapes_agree_with_the_interpreter_on_every_file(text: str) -> None:
    expr = parse_expression(text)
    shape = simple_filter(expr)
    assert shape is not None
    for path in FILES:
        scope = FixtureScope(path)
        assert _shape_holds(shape, scope) == truthy(evaluate(expr, scope)), path


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("file.name", PropertyRef("file", "name")),
        ("formula.ppu", PropertyRef("formula", "ppu")),
        ("note.Due Date", PropertyRef("note", "Due Date")),
        ("rating", PropertyRef("note", "rating")),
        ("file.nope", PropertyRef("note", "file.nope")),
        ("note.a.b", PropertyRef("note", "a.b")),
    ],
)
def test_property_ids(text: str, ref: PropertyRef) -> None:
    assert property_id(text) == ref


def test_property_ref_of_nodes() -> None:
    assert property_ref(parse_expression('formula["a b"]')) == PropertyRef("formula", "a b")
    assert property_ref(parse_expression("file.size")) == PropertyRef("file", "size")
    assert property_ref(parse_expression("file.nope")) is None
    assert property_ref(parse_expression("note[x]")) is None
    assert property_ref(A.Ident("file")) is None
    assert str(PropertyRef("note", "x")) == "note.x"


class _Counting(FixtureScope):
    calls: dict[str, int]

    def formula(self, name: str, budget: Budget) -> Value:
        self.calls[name] = self.calls.get(name, 0) + 1
        return super().formula(name, budget)


def test_a_formula_is_computed_once_per_row() -> None:
    texts = {"a": "price * 2", "b": "formula.a + formula.a", "c": "formula.b + formula.a"}
    scope = _Counting(formula_texts=texts)
    scope.calls = {}
    assert evaluate(parse_expression("formula.c + formula.b"), scope) == 125.0
    assert scope.formulas.values == {"a": 25.0, "b": 50.0, "c": 75.0}
    assert set(scope.calls) == {"a", "b", "c"}


def test_formula_errors_stay_with_their_formula() -> None:
    formulas = FormulaSet.parse({"good": "1 + 1", "bad": "1 +", "odd": "x.upper()"})
    assert formulas.formulas["good"].error is None and formulas.formulas["good"].refs == ()
    with pytest.raises(ExpressionSyntaxError):
        formulas.check("bad")
    with pytest.raises(Unsupported, match="the method upper"):
        formulas.check("odd")
    with pytest.raises(Unsupported, match="formula.missing"):
        formulas.check("missing")
    rows: Any = RowFormulas(formulas)
    assert rows.value("good", FixtureScope(), Budget()) == 2.0
    assert FormulaSet.parse({"a": 'formula.b + formula["c"] + formula.b'}).formulas["a"].refs == ("b", "c")


def test_an_error_inside_a_formula_names_the_formula() -> None:
    scope = FixtureScope(formula_texts={"bad": '"x" * 2', "outer": "formula.bad + 1"})
    with pytest.raises(EvaluationError, match=r"in formula.outer: in formula.bad: '\*' cannot combine"):
        evaluate(parse_expression("formula.outer"), scope)
