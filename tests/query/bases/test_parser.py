"""The parser: positions, errors, precedence, and property tests (any text; print → parse)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_agent.errors import InvalidQuery
from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.expr_errors import ExpressionError, ExpressionSyntaxError
from vault_agent.query.bases.expr_parse import MAX_DEPTH, MAX_EXPRESSION_CHARS, parse_expression
from vault_agent.query.bases.expr_print import to_source


def n(value: float) -> A.Num:
    return A.Num(float(value))


def i(name: str) -> A.Ident:
    return A.Ident(name)


def b(op: A.BinaryOp, left: A.Expr, right: A.Expr) -> A.Binary:
    return A.Binary(op, left, right)


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("1 + 2 * 3", b("+", n(1), b("*", n(2), n(3)))),
        ("1 - 2 - 3", b("-", b("-", n(1), n(2)), n(3))),
        ("10 / 5 / 2", b("/", b("/", n(10), n(5)), n(2))),
        ("a || b && c", b("||", i("a"), b("&&", i("b"), i("c")))),
        ("a == b < c", b("==", i("a"), b("<", i("b"), i("c")))),
        ("!a && b", b("&&", A.Unary("!", i("a")), i("b"))),
        ("-a * b", b("*", A.Unary("-", i("a")), i("b"))),
        ("-x.abs()", A.Unary("-", A.MethodCall(i("x"), "abs", ()))),
        ("(2.5).round()", A.MethodCall(n(2.5), "round", ())),
        ("5.isEmpty()", A.MethodCall(n(5), "isEmpty", ())),
        ("1e3 % .5", b("%", n(1000), n(0.5))),
        ('note["Due Date"]', A.Index(i("note"), A.Str("Due Date"))),
        ("a.b[0].c(1, 2)", A.MethodCall(A.Index(A.Member(i("a"), "b"), n(0)), "c", (n(1), n(2)))),
        ("if(x, 'a\\'b', \"c\\n\")", A.Call("if", (i("x"), A.Str("a'b"), A.Str("c\n")))),
        ("[1, [2], ]", A.ListLit((n(1), A.ListLit((n(2),))))),
        ('{"a": 1, b: true,}', A.ObjectLit((("a", n(1)), ("b", A.Bool(True))))),
        ("a / b / c", b("/", b("/", i("a"), i("b")), i("c"))),
        (
            "x.replace(/a\\/b[/]/gi, '')",
            A.MethodCall(i("x"), "replace", (A.Regex("a\\/b[/]", "gi"), A.Str(""))),
        ),
        ("this.file.name", A.Member(A.Member(A.This(), "file"), "name")),
        ("null == undefinedName", b("==", A.Null(), i("undefinedName"))),
        ("é_ü$1", i("é_ü$1")),
        ('"\\u{1F332}\\x41"', A.Str("\U0001f332A")),
    ],
)
def test_trees(text: str, tree: A.Expr) -> None:
    assert parse_expression(text) == tree


def test_positions_are_line_and_column() -> None:
    tree = parse_expression('a +\n  b.contains("x")')
    assert isinstance(tree, A.Binary)
    assert (tree.pos.line, tree.pos.column, tree.pos.offset) == (1, 3, 2)
    assert isinstance(tree.right, A.MethodCall)
    assert (tree.right.pos.line, tree.right.pos.column) == (2, 5)  # the method's name


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ("", "line 1, column 1", "expected an expression"),
        ("1 +", "line 1, column 4", "expected an expression, found the end"),
        ("f(1, 2", "line 1, column 7", "expected ',' or ')'"),
        ("a b", "line 1, column 3", "expected an operator or the end"),
        ('"abc', "line 1, column 1", "unclosed string"),
        ("a.", "line 1, column 3", "a field or method name after '.'"),
        ("(a)(1)", "line 1, column 4", "only a function name or a method can be called"),
        ("1 # 2", "line 1, column 3", "unexpected character"),
        ("/a/z", "line 1, column 4", "invalid regular expression flags"),
        ("x\n  == ", "line 2, column 6", "expected an expression"),
        ("a === b", "line 1, column 3", "'===' is not an operator here: compare with '=='"),
        ("a = b", "line 1, column 3", "'=' is not an operator here"),
    ],
)
def test_errors_name_the_position_and_what_was_expected(text: str, where: str, expected: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression(text)
    assert where in caught.value.message and expected in caught.value.message
    assert isinstance(caught.value, InvalidQuery) and caught.value.code == "INVALID_QUERY"


def test_an_error_is_relocated_in_its_file() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression("a +")
    moved = caught.value.located("formulas.ppu", 12, 8)
    assert (
        moved.message
        == "bases expression: expected an expression, found the end of the expression at formulas.ppu, line 12, column 11"
    )
    assert type(moved) is ExpressionSyntaxError


def test_length_and_depth_are_bounded() -> None:
    with pytest.raises(ExpressionSyntaxError, match="longer than"):
        parse_expression("1" * (MAX_EXPRESSION_CHARS + 1))
    for deep in ("(" * 500 + "1" + ")" * 500, "-" * 500 + "1", "!" * 500 + "x", "[" * 500 + "]" * 500,
                 "f(" * 500 + ")" * 500, "1" + "+1" * 500, "a" + ".b" * 500, "a" + "[0]" * 500):  # fmt: skip
        with pytest.raises(ExpressionSyntaxError, match="nests deeper"):
            parse_expression(deep)
    parse_expression("(" * (MAX_DEPTH - 2) + "1" + ")" * (MAX_DEPTH - 2))


# ---------------------------------------------------------------- property tests
_NAMES = st.from_regex(r"[A-Za-z_$][A-Za-z0-9_$]{0,6}", fullmatch=True).filter(
    lambda s: s not in ("true", "false", "null", "this")
)
_REGEX_SOURCE = st.from_regex(r"(?:[a-z0-9 .*+?|()^$]|\\[/dws.])+", fullmatch=True).filter(
    lambda s: not s.startswith("*")
)
_LEAVES = st.one_of(
    st.builds(A.Num, st.floats(min_value=0, allow_nan=False, allow_infinity=False)),
    st.builds(A.Str, st.text(max_size=8)),
    st.builds(A.Bool, st.booleans()),
    st.just(A.Null()),
    st.just(A.This()),
    st.builds(A.Ident, _NAMES),
    st.builds(A.Regex, _REGEX_SOURCE, st.sampled_from(["", "g", "i", "gi", "ms"])),
)
_BINARY_OPS = st.sampled_from(list(A.PRECEDENCE))


def _extend(children: st.SearchStrategy[A.Expr]) -> st.SearchStrategy[A.Expr]:
    args = st.lists(children, max_size=3).map(tuple)
    return st.one_of(
        st.builds(A.Binary, _BINARY_OPS, children, children),
        st.builds(A.Unary, st.sampled_from(["!", "-"]), children),
        st.builds(A.Member, children, _NAMES),
        st.builds(A.Index, children, children),
        st.builds(A.Call, _NAMES, args),
        st.builds(A.MethodCall, children, _NAMES, args),
        st.builds(A.ListLit, args),
        st.builds(A.ObjectLit, st.lists(st.tuples(st.text(max_size=5), children), max_size=3).map(tuple)),
    )


TREES = st.recursive(_LEAVES, _extend, max_leaves=25).filter(lambda t: A.depth(t) <= MAX_DEPTH)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TREES)
def test_print_then_parse_gives_the_same_tree(tree: A.Expr) -> None:
    assert parse_expression(to_source(tree)) == tree


@settings(max_examples=300, deadline=None)
@given(TREES)
def test_the_printed_text_is_stable(tree: A.Expr) -> None:
    text = to_source(tree)
    assert to_source(parse_expression(text)) == text


_TOKENS = st.sampled_from(
    ["a", "b.c", "1", "2.5", '"s"', "'t'", "(", ")", "[", "]", "{", "}", ",", ".", ":", "+", "-", "*", "/", "%",
     "!", "&&", "||", "==", "!=", "<", "<=", ">", ">=", "f(", "x.m(", "/r/g", "this", "null", "true", " ", "\n"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=40), st.lists(_TOKENS, max_size=30).map("".join)))
def test_any_text_parses_or_fails_with_a_named_error(text: str) -> None:
    try:
        tree = parse_expression(text)
    except ExpressionError as err:
        assert " at " in err.message
        return
    assert parse_expression(to_source(tree)) == tree


_INT = st.integers(min_value=0, max_value=9)


def _value(node: A.Expr) -> int:
    if isinstance(node, A.Num):
        return int(node.value)
    assert isinstance(node, A.Binary)
    left, right = _value(node.left), _value(node.right)
    return {"+": left + right, "-": left - right, "*": left * right}[node.op]


def _sum_of_products(first: int, ops: list[tuple[str, int]]) -> int:
    """The value the usual precedence gives: `*` binds first, then `+`/`-` left to right."""
    total, sign, product = 0, 1, first
    for op, value in ops:
        if op == "*":
            product *= value
        else:
            total += sign * product
            sign, product = (1 if op == "+" else -1), value
    return total + sign * product


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["+", "-", "*"]), _INT), min_size=1, max_size=6), _INT)
def test_arithmetic_precedence_and_associativity(ops: list[tuple[str, int]], first: int) -> None:
    """JavaScript's precedence and left associativity of + - * over small integers."""
    text = str(first) + "".join(f" {op} {value}" for op, value in ops)
    assert _value(parse_expression(text)) == _sum_of_products(first, ops)
