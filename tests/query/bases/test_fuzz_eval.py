"""Property test: any tree of known names evaluates to a value or a named expression error,
never another exception (TypeError, OverflowError, RecursionError…), within the budget."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query.bases.fixture import FixtureScope

from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.budget import Budget, Limits
from vault_agent.query.bases.catalog import METHOD_NAMES
from vault_agent.query.bases.expr_errors import ExpressionError
from vault_agent.query.bases.expr_parse import MAX_DEPTH, parse_expression
from vault_agent.query.bases.expr_print import to_source
from vault_agent.query.bases.functions_global import GLOBALS
from vault_agent.query.bases.interpret import evaluate

_PROPS = ["price", "age", "tags", "author", "date", "datetime", "property", "missing", "tasks", "authors", "value",
          "index", "acc", "file", "note", "status"]  # fmt: skip
_FIELDS = ["name", "length", "year", "days", "path", "links", "tags", "properties", "subprop", "file", "hour"]
_LEAVES = st.one_of(
    st.builds(A.Num, st.sampled_from([0.0, 1.0, 2.5, 1e9, 1e308, 3.0, 0.5])),
    st.builds(
        A.Str, st.sampled_from(["", "a", "1 day", "2024-01-31", "#book", "[[Books]]", "x,y", "P1D", "1M"])
    ),
    st.builds(A.Bool, st.booleans()),
    st.just(A.Null()),
    st.just(A.This()),
    st.builds(A.Ident, st.sampled_from(_PROPS)),
    st.builds(
        A.Regex, st.sampled_from(["a", "(x)", "\\d+", "^$", "(?<n>b)"]), st.sampled_from(["", "g", "i"])
    ),
)


def _extend(children: st.SearchStrategy[A.Expr]) -> st.SearchStrategy[A.Expr]:
    args = st.lists(children, max_size=3).map(tuple)
    return st.one_of(
        st.builds(A.Binary, st.sampled_from(list(A.PRECEDENCE)), children, children),
        st.builds(A.Unary, st.sampled_from(["!", "-"]), children),
        st.builds(A.Member, children, st.sampled_from(_FIELDS)),
        st.builds(A.Index, children, children),
        st.builds(A.Call, st.sampled_from(sorted(GLOBALS)), args),
        st.builds(A.MethodCall, children, st.sampled_from(sorted(METHOD_NAMES)), args),
        st.builds(A.ListLit, args),
    )


TREES = st.recursive(_LEAVES, _extend, max_leaves=20).filter(lambda t: A.depth(t) <= MAX_DEPTH)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TREES, st.sampled_from(["Books/Dune.md", "cover.jpg", "Frank Herbert.md"]))
def test_evaluation_gives_a_value_or_a_named_error(tree: A.Expr, row: str) -> None:
    scope = FixtureScope(row, formula_texts={"f": "price * 2"})
    budget = Budget(Limits(max_steps=20_000, regex_seconds=0.05))
    with contextlib.suppress(ExpressionError):
        evaluate(tree, scope, budget=budget)
    assert budget.steps <= budget.limits.max_steps + 1
    assert parse_expression(to_source(tree)) == tree
