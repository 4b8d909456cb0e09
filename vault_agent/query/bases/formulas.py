"""Formulas that read each other: parsed once, cycles found before any row, values per row.

`FormulaSet.parse({name: text})` parses every formula, keeps each one's error (a formula
only one column uses may fail alone: bases-run decides per column), and `cycle(name)`
names a circle of references statically (`formula.a` → `formula.b` → `formula.a`).
`RowFormulas(formulas)` is one row's values: each formula evaluated at most once per row,
with the caller's budget (nested formulas add their depth to it), and a formula that is
being evaluated when it is asked for again raises FormulaCycle (the run-time net for
computed names, `formula["a" + x]`); an error inside a formula names it (`in formula.ppu:
…`, the position being in that formula's text). A Scope's `formula()` delegates to it:

    def formula(self, name: str, budget: Budget) -> Value:
        return self.row_formulas.value(name, self, budget)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_errors import ExpressionError, FormulaCycle, Unsupported
from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.scope import Scope
from vault_agent.query.bases.support import check_supported, formula_refs
from vault_agent.query.bases.values import Value


@dataclass(frozen=True, slots=True)
class Formula:
    """One parsed formula: its tree and depth, or the error that refuses it."""

    name: str
    expr: A.Expr | None
    error: ExpressionError | None
    depth: int = 0
    refs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FormulaSet:
    formulas: Mapping[str, Formula] = field(default_factory=dict)

    @classmethod
    def parse(cls, texts: Mapping[str, str]) -> FormulaSet:
        """Every formula parsed and checked (errors kept per formula, raised on use)."""
        out: dict[str, Formula] = {}
        for name, text in texts.items():
            try:
                expr = parse_expression(text)
                check_supported(expr)
            except ExpressionError as err:
                out[name] = Formula(name, None, err)
                continue
            refs = tuple(dict.fromkeys(ref for ref, _ in formula_refs(expr)))
            out[name] = Formula(name, expr, None, A.depth(expr), refs)
        return cls(out)

    def cycle(self, name: str) -> list[str] | None:
        """A circle of references through `name` (`[a, b, a]`), or None (iterative: a base
        may chain many formulas)."""
        if name not in self.formulas:
            return None
        path = [name]
        pending = [iter(self.formulas[name].refs)]
        done: set[str] = set()
        while pending:
            ref = next(pending[-1], None)
            if ref is None:
                done.add(path.pop())
                pending.pop()
                continue
            if ref in path:
                return path[path.index(ref) :] + [ref]
            if ref in done or ref not in self.formulas:
                continue
            path.append(ref)
            pending.append(iter(self.formulas[ref].refs))
        return None

    def check(self, name: str) -> Formula:
        """The formula `name`, usable.

        Raises:
            Unsupported: no formula of that name.
            ExpressionError: the formula's own parse or support error.
            FormulaCycle: it references itself through other formulas.
        """
        formula = self.formulas.get(name)
        if formula is None:
            raise Unsupported(f"formula.{name} (no formula of that name in this base)")
        if formula.error is not None:
            raise formula.error
        circle = self.cycle(name)
        if circle is not None:
            raise FormulaCycle(
                "formulas reference each other in a circle: " + " → ".join(f"formula.{n}" for n in circle)
            )
        return formula


class RowFormulas:
    """One row's formula values, each computed once, cycles refused."""

    __slots__ = ("formulas", "values", "active")

    def __init__(self, formulas: FormulaSet) -> None:
        self.formulas = formulas
        self.values: dict[str, Value] = {}
        self.active: list[str] = []

    def value(self, name: str, scope: Scope, budget: Budget) -> Value:
        """`formula.name` for this row.

        Raises:
            FormulaCycle: `name` is already being evaluated (a circle through computed names).
            ExpressionError: as FormulaSet.check, or from evaluating the formula.
        """
        if name in self.values:
            return self.values[name]
        if name in self.active:
            chain = self.active[self.active.index(name) :] + [name]
            raise FormulaCycle(
                "formulas reference each other in a circle: " + " → ".join(f"formula.{n}" for n in chain)
            )
        formula = self.formulas.check(name)
        assert formula.expr is not None  # check() raised otherwise
        self.active.append(name)
        budget.enter(formula.depth)
        try:
            result = evaluate(formula.expr, scope, budget=budget)
        except FormulaCycle:
            raise
        except ExpressionError as err:  # its position is in the formula's own text: say which
            raise type(err)(f"in formula.{name}: {err.reason}", err.position) from err
        finally:
            budget.leave(formula.depth)
            self.active.pop()
        self.values[name] = result
        return result
