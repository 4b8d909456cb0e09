"""What a built-in function or method is, what it receives, and argument checks.

A `Builtin` is eager (its arguments evaluated first) or lazy (it gets the argument trees
and evaluates them itself: `if` evaluates one branch, `filter`/`map`/`reduce` evaluate
their expression per element with `value`, `index` and `acc` bound). Built-ins reach the
evaluation only through `Context` (the interpreter implements it): nothing in an
expression can name a Python attribute or object; a name is looked up in our tables only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.expr_ast import Expr, Position
from vault_agent.query.bases.expr_errors import EvaluationError
from vault_agent.query.bases.scope import Scope
from vault_agent.query.bases.values import Value, type_name


class Context(Protocol):
    """The evaluation a built-in runs in."""

    @property
    def scope(self) -> Scope: ...

    @property
    def budget(self) -> Budget: ...

    def eval(self, expr: Expr) -> Value:
        """Evaluate a sub-expression in the current bindings."""
        ...

    def eval_with(self, expr: Expr, bindings: Mapping[str, Value]) -> Value:
        """Evaluate a sub-expression with extra local names (`value`, `index`, `acc`)."""
        ...


EagerFn = Callable[[Context, Value, list[Value], Position], Value]
LazyFn = Callable[[Context, Value, tuple[Expr, ...], Position], Value]


@dataclass(frozen=True, slots=True)
class Builtin:
    """One function or method: its arity (`max_args` None: any number) and its code."""

    min_args: int
    max_args: int | None
    eager: EagerFn | None = None
    lazy: LazyFn | None = None

    def accepts(self, count: int) -> bool:
        return count >= self.min_args and (self.max_args is None or count <= self.max_args)


def eager(min_args: int, max_args: int | None, fn: EagerFn) -> Builtin:
    """A built-in that receives its arguments evaluated."""
    return Builtin(min_args, max_args, eager=fn)


def lazy(min_args: int, max_args: int | None, fn: LazyFn) -> Builtin:
    """A built-in that receives its argument trees and evaluates them itself."""
    return Builtin(min_args, max_args, lazy=fn)


Table = dict[str, Builtin]


def want_str(value: Value, what: str, pos: Position) -> str:
    """`value` as a string argument of `what`.

    Raises:
        EvaluationError: it is not a string.
    """
    if isinstance(value, str):
        return value
    raise EvaluationError(f"{what} needs a string, not a {type_name(value)}", pos)


def want_number(value: Value, what: str, pos: Position) -> float:
    """`value` as a number argument of `what`.

    Raises:
        EvaluationError: it is not a number.
    """
    if isinstance(value, float):
        return value
    raise EvaluationError(f"{what} needs a number, not a {type_name(value)}", pos)


def want_int(value: Value, what: str, pos: Position) -> int:
    """A number argument used as a count or an index (JavaScript truncates; NaN is 0).

    Raises:
        EvaluationError: it is not a number.
    """
    number = want_number(value, what, pos)
    if math.isnan(number):
        return 0
    if math.isinf(number):
        return 2**53 if number > 0 else -(2**53)
    return int(number)


def want_list(value: Value, what: str, pos: Position) -> list[Value]:
    """`value` as the list receiver or argument of `what`.

    Raises:
        EvaluationError: it is not a list.
    """
    if isinstance(value, list):
        return value
    raise EvaluationError(f"{what} needs a list, not a {type_name(value)}", pos)
