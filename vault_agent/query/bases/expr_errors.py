"""The errors of Bases expressions: each is an `InvalidQuery` (INVALID_QUERY) with a position.

    InvalidQuery
    └── ExpressionError            reason + position; `located()` re-anchors it in a file
        ├── ExpressionSyntaxError  the text does not parse: what was expected, what was found
        ├── Unsupported            a construct we do not evaluate (a function, a method, a field)
        ├── EvaluationError        a value of the wrong type at run time (`"a" * 2`)
        ├── BudgetExceeded         the work bound of one evaluation (steps, memory, regex time, depth)
        └── FormulaCycle           formulas that reference each other in a circle

Messages name the construct (a function or field name) and its position, never the
expression text or a note's values. bases-run turns `Unsupported` in one column's formula
into that column's `UNSUPPORTED` diagnostic; everything else stays INVALID_QUERY.
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.query.bases.expr_ast import NOWHERE, Position

PREFIX = "bases expression"


class ExpressionError(InvalidQuery):
    """Base of the expression errors: `reason` (no position) and `position` (in the expression)."""

    def __init__(self, reason: str, position: Position = NOWHERE, where: str = "") -> None:
        self.reason = reason
        self.position = position
        self.where = where or position.describe()
        super().__init__(f"{PREFIX}: {reason} at {self.where}")

    def located(self, context: str, line: int, column: int) -> ExpressionError:
        """The same error, positioned in a file: the expression starts at (`line`, `column`)
        of it and `context` names the place (`formulas.price`, `views[0].filters`)."""
        file_line = line + self.position.line - 1
        file_column = self.position.column + (column - 1 if self.position.line == 1 else 0)
        where = f"{context}, line {file_line}, column {file_column}"
        return type(self)(self.reason, self.position, where)


class ExpressionSyntaxError(ExpressionError):
    """The expression text does not parse (or is nested too deep, or too long)."""


class Unsupported(ExpressionError):
    """A construct the evaluator refuses by name instead of approximating it."""


class EvaluationError(ExpressionError):
    """A value of a type an operator, function or method cannot take."""


class BudgetExceeded(ExpressionError):
    """One evaluation exceeded its bound of steps, allocated items, regex time or depth."""


class FormulaCycle(ExpressionError):
    """A formula references itself, directly or through other formulas."""
