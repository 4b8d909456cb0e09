"""The tree-walking interpreter: `evaluate(expr, scope)` → a value.

Names: a variable bound by `filter`/`map`/`reduce` (`value`, `index`, `acc`) or by the caller
(a summary's `values`); `file` (the row's file), `note` (its properties), `this`; anything else
a note property. `note.x`, `note["x"]`, `formula.x`, `formula["x"]` read a property or a
formula (through `Scope.formula`); `file.x` a file field.

Operators (JavaScript's, where the docs are silent our choice is written here):
- `&&`, `||`, `!` give booleans (from the operands' truth); `&&`/`||` stop early.
- `==`, `!=`, `<`… as compare.py (types kept apart; null unordered).
- `+`: numbers add; a string on either side concatenates the other's text (null is "");
  lists concatenate; a date plus a duration (or a duration string: `now() + "1 day"`) is a
  date; durations add. `-`: numbers, `date - date` (a duration), `date - duration`,
  durations. `*`, `/`: numbers, a duration times/by a number (duration on the left, as the
  docs say). `%`: numbers (JavaScript's remainder). Division by zero is ±Infinity or NaN.
- Arithmetic with null gives null (a missing value stays missing, never a made-up 0);
  other mixes (`"a" * 2`, `true + 1`, `date + 3`) are EvaluationError (Obsidian reports
  "invalid arithmetic").
- A method on null gives null (`missing.lower()`), except the methods of any value
  (`isEmpty()` is true, `isTruthy()` false, `toString()` ""); a field of null is null.
- Indexing: a list by a whole number (out of range, negative or fractional: null), an
  object or a file by a string, a string by a number (its character, or null).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from vault_agent.query.bases import compare, dates
from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.budget import Budget
from vault_agent.query.bases.catalog import FILE_FIELD_NAMES, METHOD_NAMES, find_method
from vault_agent.query.bases.expr_errors import EvaluationError, Unsupported
from vault_agent.query.bases.functions_global import GLOBALS
from vault_agent.query.bases.functions_text import compile_regex
from vault_agent.query.bases.functions_types import field_of, file_field
from vault_agent.query.bases.scope import Scope, all_properties, property_value
from vault_agent.query.bases.values import (
    DateValue,
    DurationValue,
    FileValue,
    Value,
    to_text,
    truthy,
    type_name,
)

ROOTS = ("file", "note", "formula")


def evaluate(
    expr: A.Expr, scope: Scope, *, budget: Budget | None = None, variables: Mapping[str, Value] | None = None
) -> Value:
    """The value of `expr` for one row.

    Raises:
        Unsupported: a function, method or field we do not evaluate (check_supported finds
            these before any row is read).
        EvaluationError: a value of the wrong type for an operator, function or method.
        BudgetExceeded: more work than the budget allows.
        FormulaCycle: formulas that reference each other (through Scope.formula).
    """
    return Interpreter(scope, budget or Budget(), dict(variables or {})).eval(expr)


class Interpreter:
    """One evaluation's state (the builtins' `Context`): scope, budget, bound names."""

    __slots__ = ("scope", "budget", "bindings")

    def __init__(self, scope: Scope, budget: Budget, bindings: dict[str, Value]) -> None:
        self.scope = scope
        self.budget = budget
        self.bindings = bindings

    def eval(self, expr: A.Expr) -> Value:
        """One node's value (a step of the budget).

        Raises:
            ExpressionError: as `evaluate`.
        """
        budget = self.budget
        budget.steps += 1
        if budget.steps > budget.limits.max_steps:
            budget.step(0, expr.pos)
        return _HANDLERS[type(expr)](self, expr)

    def eval_with(self, expr: A.Expr, bindings: Mapping[str, Value]) -> Value:
        """A node's value with extra names bound (a lambda's `value`, `index`, `acc`).

        Raises:
            ExpressionError: as `evaluate`.
        """
        saved = self.bindings
        self.bindings = {**saved, **bindings}
        try:
            return self.eval(expr)
        finally:
            self.bindings = saved

    def is_root(self, node: A.Expr, root: str) -> bool:
        """`node` is the bare name `root` (`file`, `note`, `formula`), not a bound variable."""
        return isinstance(node, A.Ident) and node.name == root and root not in self.bindings


def _literal(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Str | A.Num | A.Bool)
    return node.value


def _null(it: Interpreter, node: A.Expr) -> Value:
    return None


def _regex(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Regex)
    return compile_regex(node.pattern, node.flags, node.pos)


def _list(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.ListLit)
    it.budget.allocate(len(node.items), node.pos)
    return [it.eval(item) for item in node.items]


def _object(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.ObjectLit)
    it.budget.allocate(len(node.entries), node.pos)
    return {key: it.eval(value) for key, value in node.entries}


def _ident(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Ident)
    name = node.name
    if name in it.bindings:
        return it.bindings[name]
    if name == "file":
        return FileValue(it.scope.file)
    if name == "note":
        return dict[str, Value](all_properties(it.scope.file, it.scope))
    if name == "formula":
        raise Unsupported("'formula' without a formula name (write formula.name)", node.pos)
    return property_value(it.scope.file, name, it.scope)


def _this(it: Interpreter, node: A.Expr) -> Value:
    this = it.scope.this
    return None if this is None else FileValue(this)


def _rooted(it: Interpreter, obj: A.Expr, name: str, pos: A.Position) -> tuple[bool, Value]:
    """(True, value) when `obj.name` reads a note property, a formula or a file field."""
    if it.is_root(obj, "note"):
        return True, property_value(it.scope.file, name, it.scope)
    if it.is_root(obj, "formula"):
        return True, it.scope.formula(name, it.budget)
    if it.is_root(obj, "file"):
        if name not in FILE_FIELD_NAMES:
            raise Unsupported(f"file.{name} (not a file field; a note property is note.{name})", pos)
        return True, file_field(it, it.scope.file, name)
    return False, None


def _member(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Member)
    rooted, value = _rooted(it, node.obj, node.name, node.pos)
    return value if rooted else field_of(it, it.eval(node.obj), node.name, node.pos)


def _index(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Index)
    if any(it.is_root(node.obj, root) for root in ROOTS):
        key = it.eval(node.index)
        if not isinstance(key, str):
            raise EvaluationError(f"a property name must be text, not a {type_name(key)}", node.index.pos)
        return _rooted(it, node.obj, key, node.pos)[1]
    return _item(it, it.eval(node.obj), it.eval(node.index), node.pos)


def _item(it: Interpreter, value: Value, key: Value, pos: A.Position) -> Value:
    if value is None or key is None:
        return None
    if isinstance(value, list | str) and isinstance(key, float):
        if not key.is_integer() or key < 0 or key >= len(value):
            return None
        return value[int(key)]
    if isinstance(value, dict):
        return value.get(key) if isinstance(key, str) else None
    if isinstance(key, str) and not isinstance(value, list | str):
        return field_of(it, value, key, pos)
    raise EvaluationError(f"a {type_name(value)} cannot be indexed by a {type_name(key)}", pos)


def _arguments(it: Interpreter, name: str, count: int, accepts: bool, pos: A.Position) -> None:
    if not accepts:
        raise EvaluationError(f"{name}() does not take {count} argument{'s' if count != 1 else ''}", pos)


def _call(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Call)
    builtin = GLOBALS.get(node.name)
    if builtin is None:
        raise Unsupported(f"the function {node.name}()", node.pos)
    _arguments(it, node.name, len(node.args), builtin.accepts(len(node.args)), node.pos)
    if builtin.lazy is not None:
        return builtin.lazy(it, None, node.args, node.pos)
    assert builtin.eager is not None
    return builtin.eager(it, None, [it.eval(arg) for arg in node.args], node.pos)


def _method(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.MethodCall)
    receiver = it.eval(node.obj)
    found = find_method(receiver, node.name)
    if found is None:
        if node.name not in METHOD_NAMES:
            raise Unsupported(f"the method {node.name}()", node.pos)
        if receiver is None:
            return None
        raise EvaluationError(f"{node.name}() is not a method of a {type_name(receiver)}", node.pos)
    builtin, target = found
    _arguments(it, node.name, len(node.args), builtin.accepts(len(node.args)), node.pos)
    if builtin.lazy is not None:
        return builtin.lazy(it, target, node.args, node.pos)
    assert builtin.eager is not None
    return builtin.eager(it, target, [it.eval(arg) for arg in node.args], node.pos)


def _unary(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Unary)
    value = it.eval(node.operand)
    if node.op == "!":
        return not truthy(value)
    if value is None:
        return None
    if isinstance(value, float):
        return -value
    if isinstance(value, DurationValue):
        return dates.scale(value, -1.0)
    raise EvaluationError(f"'-' cannot negate a {type_name(value)}", node.pos)


def _binary(it: Interpreter, node: A.Expr) -> Value:
    assert isinstance(node, A.Binary)
    op = node.op
    if op == "&&":
        return truthy(it.eval(node.left)) and truthy(it.eval(node.right))
    if op == "||":
        return truthy(it.eval(node.left)) or truthy(it.eval(node.right))
    left, right = it.eval(node.left), it.eval(node.right)
    if op == "==":
        return compare.equals(left, right)
    if op == "!=":
        return not compare.equals(left, right)
    if op in _ORDER:
        order = compare.compare(left, right)
        return order is not None and _ORDER[op](order)
    return _arithmetic(it, op, left, right, node.pos)


_ORDER: dict[str, Callable[[int], bool]] = {
    "<": lambda o: o < 0,
    "<=": lambda o: o <= 0,
    ">": lambda o: o > 0,
    ">=": lambda o: o >= 0,
}


def _arithmetic(it: Interpreter, op: str, left: Value, right: Value, pos: A.Position) -> Value:
    if (
        op == "+"
        and (isinstance(left, str) or isinstance(right, str))
        and not isinstance(left, DateValue | DurationValue)
    ):
        text = to_text(left) + to_text(right)
        it.budget.allocate(len(text), pos, string=True)
        return text
    if left is None or right is None:
        return None
    if isinstance(left, float) and isinstance(right, float):
        return _numbers(op, left, right)
    if op == "+" and isinstance(left, list) and isinstance(right, list):
        it.budget.allocate(len(left) + len(right), pos)
        return left + right
    try:
        if isinstance(left, DateValue):
            return _date_arithmetic(op, left, right, pos)
        if isinstance(left, DurationValue):
            return _duration_arithmetic(op, left, right, pos)
    except OverflowError as err:
        raise EvaluationError("the date is out of range", pos) from err
    raise EvaluationError(f"'{op}' cannot combine a {type_name(left)} and a {type_name(right)}", pos)


def _numbers(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    if b == 0 or not math.isfinite(a) or math.isnan(b):
        return math.nan
    return a if math.isinf(b) else math.fmod(a, b)


def _date_arithmetic(op: str, left: DateValue, right: Value, pos: A.Position) -> Value:
    if isinstance(right, str):
        duration = dates.parse_duration(right)
        if duration is None:
            moment = dates.parse_date(right) if op == "-" else None
            if moment is None:
                raise EvaluationError(f'\'{op}\' needs a duration after a date ("1 day", "2w")', pos)
            return dates.between(left, moment)
        right = duration
    if isinstance(right, DurationValue) and op in "+-":
        return dates.add(left, right, 1 if op == "+" else -1)
    if isinstance(right, DateValue) and op == "-":
        return dates.between(left, right)
    raise EvaluationError(f"'{op}' cannot combine a date and a {type_name(right)}", pos)


def _duration_arithmetic(op: str, left: DurationValue, right: Value, pos: A.Position) -> Value:
    if isinstance(right, str) and op in "+-":
        parsed = dates.parse_duration(right)
        right = parsed if parsed is not None else right
    if isinstance(right, DurationValue) and op in "+-":
        return dates.combine(left, right, 1 if op == "+" else -1)
    if isinstance(right, DateValue) and op == "+":
        return dates.add(right, left)
    if isinstance(right, float) and op in "*/":
        if op == "/" and right == 0:
            raise EvaluationError("a duration cannot be divided by zero", pos)
        return dates.scale(left, right if op == "*" else 1 / right)
    raise EvaluationError(f"'{op}' cannot combine a duration and a {type_name(right)}", pos)


_HANDLERS: dict[type, Callable[[Interpreter, A.Expr], Value]] = {
    A.Str: _literal,
    A.Num: _literal,
    A.Bool: _literal,
    A.Null: _null,
    A.Regex: _regex,
    A.ListLit: _list,
    A.ObjectLit: _object,
    A.Ident: _ident,
    A.This: _this,
    A.Member: _member,
    A.Index: _index,
    A.Call: _call,
    A.MethodCall: _method,
    A.Unary: _unary,
    A.Binary: _binary,
}
