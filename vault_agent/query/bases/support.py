"""Static checks before any row is read: `check_supported` and the formulas an expression reads.

`check_supported(expr)` walks the tree once and raises on the first construct we would
refuse at run time anyway, so a view fails closed before it shows a single row: an unknown
global function (`not(…)`, `empty(…)` of the pre-1.9.2 syntax), an unknown method (`upper()`,
`sum()`), a field `file.x` that is not a file field, a wrong number of arguments, bare
`formula`, a regex literal that does not compile or uses the `y` flag.
"""

from __future__ import annotations

from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.catalog import FILE_FIELD_NAMES, METHOD_NAMES, method_arity
from vault_agent.query.bases.expr_errors import EvaluationError, Unsupported
from vault_agent.query.bases.functions_global import GLOBALS
from vault_agent.query.bases.functions_text import compile_regex


def _arity_error(name: str, count: int, pos: A.Position) -> EvaluationError:
    return EvaluationError(f"{name}() does not take {count} argument{'s' if count != 1 else ''}", pos)


def check_supported(expr: A.Expr) -> None:
    """Refuse, before evaluation, what evaluation would refuse by name.

    Raises:
        Unsupported: an unknown function, method or file field; bare `formula`; the `y` regex flag.
        EvaluationError: a known function or method given a number of arguments no type takes.
        ExpressionSyntaxError: a regex literal that does not compile.
    """
    for node in A.walk(expr):
        if isinstance(node, A.Call):
            builtin = GLOBALS.get(node.name)
            if builtin is None:
                raise Unsupported(f"the function {node.name}()", node.pos)
            if not builtin.accepts(len(node.args)):
                raise _arity_error(node.name, len(node.args), node.pos)
        elif isinstance(node, A.MethodCall):
            if node.name not in METHOD_NAMES:
                raise Unsupported(f"the method {node.name}()", node.pos)
            low, high = method_arity(node.name)
            if len(node.args) < low or (high is not None and len(node.args) > high):
                raise _arity_error(node.name, len(node.args), node.pos)
        elif isinstance(node, A.Member) and _is_bare(node.obj, "file") and node.name not in FILE_FIELD_NAMES:
            raise Unsupported(
                f"file.{node.name} (not a file field; a note property is note.{node.name})", node.pos
            )
        elif isinstance(node, A.Regex):
            compile_regex(node.pattern, node.flags, node.pos)
    _check_formula_roots(expr)


def _is_bare(node: A.Expr, name: str) -> bool:
    return isinstance(node, A.Ident) and node.name == name


def _check_formula_roots(expr: A.Expr) -> None:
    """Bare `formula` (not `formula.x` or `formula["x"]`) is refused."""
    allowed: set[int] = set()
    for node in A.walk(expr):
        if isinstance(node, A.Member | A.Index) and _is_bare(node.obj, "formula"):
            allowed.add(id(node.obj))
        elif _is_bare(node, "formula") and id(node) not in allowed:
            raise Unsupported("'formula' without a formula name (write formula.name)", node.pos)


def formula_refs(expr: A.Expr) -> list[tuple[str, A.Position]]:
    """The formulas an expression reads (`formula.x`, `formula["x"]`), in source order.

    A computed name (`formula[name]`) cannot be known here; it is still checked for cycles
    at run time (formulas.RowFormulas).
    """
    refs: list[tuple[str, A.Position]] = []
    for node in A.walk(expr):
        if isinstance(node, A.Member) and _is_bare(node.obj, "formula"):
            refs.append((node.name, node.pos))
        elif isinstance(node, A.Index) and _is_bare(node.obj, "formula") and isinstance(node.index, A.Str):
            refs.append((node.index.value, node.pos))
    return refs
