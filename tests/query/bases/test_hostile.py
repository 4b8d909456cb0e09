"""Hostile expressions end with a named error, bounded by the budget's counters (not by timing).

The checks read the counters: a bomb is refused before it allocates (`items` stays under its
bound), a runaway loop stops at `max_steps`, a deep tree at the parser's depth, formulas at
the budget's depth, a catastrophic regex at its timeout (BudgetExceeded, however long the
loaded machine took to get there).
"""

from __future__ import annotations

import pytest
from query.bases.fixture import FixtureScope

from vault_agent.query.bases.budget import Budget, Limits
from vault_agent.query.bases.expr_errors import BudgetExceeded, ExpressionSyntaxError, FormulaCycle
from vault_agent.query.bases.expr_parse import MAX_DEPTH, parse_expression
from vault_agent.query.bases.formulas import FormulaSet
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.values import Value


def _run(text: str, budget: Budget | None = None, **kwargs: object) -> Value:
    return evaluate(parse_expression(text), FixtureScope(**kwargs), budget=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        '"x".repeat(1e9)',
        '"abc".repeat(400000)',
        '"ab".repeat(600000).repeat(2)',
        "[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map('x'.repeat(100000)))",
        '"a".repeat(900000) + "b".repeat(900000) + "c".repeat(900000)',
    ],
)
def test_allocation_bombs_are_refused_before_allocating(text: str) -> None:
    budget = Budget()
    with pytest.raises(BudgetExceeded, match="would make more than|of more than"):
        _run(text, budget)
    assert budget.items <= budget.limits.max_items


@pytest.mark.parametrize(
    "text",
    [
        '"x".repeat(2000).split("").map("y".repeat(2000).split("").map(value)).flat().length',
        "[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map("
        "[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map(value)))))",
        '"x".repeat(99999).split("").reduce(acc + value.length, 0) + "y".repeat(99999).split("").reduce(acc + 1, 0)',
        '"ab".repeat(50000).split("").unique().sort().map(value + value).filter(value != "zz").length',
    ],
)
def test_runaway_loops_stop_at_the_step_bound(text: str) -> None:
    budget = Budget()
    with pytest.raises(BudgetExceeded):
        _run(text, budget)
    assert budget.steps <= budget.limits.max_steps + 1 or budget.items > budget.limits.max_items


def test_a_small_budget_is_enforced_exactly() -> None:
    budget = Budget(Limits(max_steps=50))
    with pytest.raises(BudgetExceeded, match="more than 50 steps"):
        _run("[1,2,3,4,5,6,7,8,9,10,11,12].map(value * 2).map(value + 1).map(value - 1).map(value)", budget)
    assert budget.steps == 51


@pytest.mark.parametrize(
    "pattern",
    [r"/(a|aa)+$/", r"/(a|a)+$/", r"/^(a+)+$/", r"/(x+x+)+y/", r"/(.*a){25}/"],
)
def test_catastrophic_regexes_end_at_their_timeout(pattern: str) -> None:
    subject = '"' + "a" * 32 + '!"' if "x" not in pattern else '"' + "x" * 40 + '"'
    budget = Budget(Limits(regex_seconds=0.05))
    for call in (
        f"{pattern}.matches({subject})",
        f"{subject}.replace({pattern}g, '')",
        f"{subject}.split({pattern})",
    ):
        try:
            _run(call, budget)
        except BudgetExceeded as err:
            assert "regular expression ran longer" in err.message
        # an engine that finds the answer fast (it optimises some of these) is fine too


def test_a_known_catastrophic_regex_is_stopped() -> None:
    with pytest.raises(BudgetExceeded, match="regular expression ran longer than 0.05 s"):
        _run('/(a|aa)+$/.matches("' + "a" * 40 + '!")', Budget(Limits(regex_seconds=0.05)))


@pytest.mark.parametrize(
    "text",
    ["(" * 10_000 + "1" + ")" * 10_000, "-" * 10_000 + "1", "[" * 10_000, "1" + "+1" * 5_000, "x" + ".y" * 5_000,
     "f(" * 5_000, "!" * 100_000 + "x", '"' + "\\" * 10_000, "{a:" * 5_000],
)  # fmt: skip
def test_deep_and_huge_texts_are_syntax_errors(text: str) -> None:
    with pytest.raises(ExpressionSyntaxError, match="nests deeper|longer than|unclosed|expected"):
        parse_expression(text)


def test_a_huge_list_literal_within_the_length_bound_evaluates_within_budget() -> None:
    text = "[" + ",".join(["1"] * 8000) + "].length"
    assert _run(text) == 8000.0


def test_formula_cycles_are_found_before_rows_and_at_run_time() -> None:
    formulas = FormulaSet.parse(
        {"a": "formula.b + 1", "b": "formula.c * 2", "c": "formula.a", "ok": "1", "self": "formula.self"}
    )
    assert formulas.cycle("a") == ["a", "b", "c", "a"]
    assert formulas.cycle("self") == ["self", "self"]
    assert formulas.cycle("ok") is None
    with pytest.raises(FormulaCycle, match="formula.a → formula.b → formula.c → formula.a"):
        formulas.check("a")
    scope = FixtureScope(formula_texts={"a": 'formula["b"]', "b": 'formula["a" + ""]'})
    with pytest.raises(FormulaCycle, match="formula.a → formula.b → formula.a"):
        evaluate(parse_expression("formula.a"), scope)


def test_chained_formulas_stop_at_the_depth_bound() -> None:
    deep = "(" * 60 + "1" + ")" * 60  # parenthesised: depth of the tree is 1
    texts = {f"f{i}": f"formula.f{i + 1} + " + " + ".join(["1"] * 60) for i in range(100)}
    texts["f100"] = deep
    scope = FixtureScope(formula_texts=texts)
    budget = Budget()
    with pytest.raises(BudgetExceeded, match="formulas nest deeper than"):
        evaluate(parse_expression("formula.f0"), scope, budget=budget)
    assert budget.depth == 0  # every level left on the way out


def test_the_depth_bounds_leave_recursion_to_spare() -> None:
    """Formulas nested to just under the budget's depth evaluate without RecursionError."""
    nest = 30
    assert nest < MAX_DEPTH
    texts = {f"f{i}": "[" * nest + f"formula.f{i + 1}" + "]" * nest for i in range(3)}
    texts["f3"] = "[" * 20 + "]" * 20
    budget = Budget()
    assert 3 * (nest + 1) + 20 < budget.limits.max_depth
    assert _run("formula.f0", budget, formula_texts=texts) is not None
    assert budget.depth == 0
