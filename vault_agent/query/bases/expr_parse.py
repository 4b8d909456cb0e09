"""The parser of Bases expressions: precedence climbing over expr_lex's tokens to expr_ast.

Precedence, lowest first, all binary operators left-associative (JavaScript's order):
`||` < `&&` < `== !=` < `< <= > >=` < `+ -` < `* / %` < unary `! -` < postfix
(`.name`, `.name(args)`, `[index]`). A call is a global function (`name(args)`) or a
method (`value.name(args)`): nothing else can be called. Lists `[a, b]` and objects
`{"k": v}` (keys strings or names) allow a trailing comma, as JavaScript does.

Bounded: the text is at most MAX_EXPRESSION_CHARS long and the tree at most MAX_DEPTH deep
(nesting and left-deep chains like `1+1+…+1` alike), so neither the parser nor the
interpreter can exhaust Python's recursion.
"""

from __future__ import annotations

from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.expr_errors import ExpressionSyntaxError
from vault_agent.query.bases.expr_lex import Token, tokens

MAX_EXPRESSION_CHARS = 16_384
MAX_DEPTH = 64
# The parser's own recursion guard: a list or call level costs two (the bracket and the
# expression inside), so twice the tree bound, plus the root; a few hundred Python frames.
_MAX_NESTING = 2 * MAX_DEPTH + 2
_KEYWORDS = {"true", "false", "null", "this"}


def parse_expression(text: str) -> A.Expr:
    """The AST of one expression (a filter statement, a formula, a summary).

    Raises:
        ExpressionSyntaxError: the text does not parse (the message gives the position and
            what was expected), is longer than MAX_EXPRESSION_CHARS or nests deeper than MAX_DEPTH.
    """
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionSyntaxError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    parser = _Parser(tokens(text))
    if parser.at_end():
        raise parser.fail("an expression")
    expr = parser.expression(0)
    if not parser.at_end():
        raise parser.fail("an operator or the end of the expression")
    if A.depth(expr) > MAX_DEPTH:
        raise ExpressionSyntaxError(f"the expression nests deeper than {MAX_DEPTH} levels", expr.pos)
    return expr


class _Parser:
    def __init__(self, toks: list[Token]) -> None:
        self.toks = toks
        self.i = 0
        self.nesting = 0

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def at_end(self) -> bool:
        return self.tok.kind == "eof"

    def advance(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def is_op(self, op: str) -> bool:
        return self.tok.kind == "op" and self.tok.text == op

    def fail(self, expected: str) -> ExpressionSyntaxError:
        return ExpressionSyntaxError(f"expected {expected}, found {self.tok.describe()}", self.tok.pos)

    def expect(self, op: str) -> Token:
        if not self.is_op(op):
            raise self.fail(f"'{op}'")
        return self.advance()

    def enter(self) -> None:
        self.nesting += 1
        if self.nesting > _MAX_NESTING:
            raise ExpressionSyntaxError(f"the expression nests deeper than {MAX_DEPTH} levels", self.tok.pos)

    def expression(self, min_power: int) -> A.Expr:
        self.enter()
        left = self.unary()
        while self.tok.kind == "op" and A.PRECEDENCE.get(self.tok.text, 0) > min_power:
            op_tok = self.advance()
            right = self.expression(A.PRECEDENCE[op_tok.text])
            left = A.Binary(op_tok.text, left, right, op_tok.pos)  # type: ignore[arg-type]  # a key of PRECEDENCE
        self.nesting -= 1
        return left

    def unary(self) -> A.Expr:
        if self.is_op("!") or self.is_op("-"):
            op_tok = self.advance()
            self.enter()
            operand = self.unary()
            self.nesting -= 1
            return A.Unary("!" if op_tok.text == "!" else "-", operand, op_tok.pos)
        return self.postfix(self.primary())

    def postfix(self, expr: A.Expr) -> A.Expr:
        while True:
            if self.is_op("."):
                self.advance()
                name_tok = self.tok
                if name_tok.kind != "ident":
                    raise self.fail("a field or method name after '.'")
                self.advance()
                if self.is_op("("):
                    expr = A.MethodCall(expr, name_tok.text, self.arguments(), name_tok.pos)
                else:
                    expr = A.Member(expr, name_tok.text, name_tok.pos)
            elif self.is_op("["):
                open_tok = self.advance()
                index = self.expression(0)
                self.expect("]")
                expr = A.Index(expr, index, open_tok.pos)
            elif self.is_op("("):
                raise ExpressionSyntaxError(
                    "only a function name or a method can be called (write name(…) or value.method(…))",
                    self.tok.pos,
                )
            else:
                return expr

    def arguments(self) -> tuple[A.Expr, ...]:
        self.expect("(")
        return tuple(self.sequence(")"))

    def sequence(self, close: str) -> list[A.Expr]:
        """Comma-separated expressions up to `close` (consumed); a trailing comma is allowed."""
        items: list[A.Expr] = []
        while not self.is_op(close):
            items.append(self.expression(0))
            if not self.is_op(","):
                break
            self.advance()
        if not self.is_op(close):
            raise self.fail(f"',' or '{close}'")
        self.advance()
        return items

    def primary(self) -> A.Expr:
        tok = self.tok
        if tok.kind == "num":
            self.advance()
            return A.Num(float(tok.text), tok.pos)
        if tok.kind == "str":
            self.advance()
            return A.Str(tok.text, tok.pos)
        if tok.kind == "regex":
            self.advance()
            pattern, _, flags = tok.text.rpartition("/")
            return A.Regex(pattern, flags, tok.pos)
        if tok.kind == "ident":
            return self.name()
        if self.is_op("("):
            self.advance()
            inner = self.expression(0)
            self.expect(")")
            return inner
        if self.is_op("["):
            self.advance()
            self.enter()
            items = self.sequence("]")
            self.nesting -= 1
            return A.ListLit(tuple(items), tok.pos)
        if self.is_op("{"):
            return self.object_literal()
        raise self.fail("an expression")

    def name(self) -> A.Expr:
        tok = self.advance()
        if tok.text in _KEYWORDS:
            if tok.text == "this":
                return A.This(tok.pos)
            return A.Null(tok.pos) if tok.text == "null" else A.Bool(tok.text == "true", tok.pos)
        if self.is_op("("):
            self.enter()
            args = self.arguments()
            self.nesting -= 1
            return A.Call(tok.text, args, tok.pos)
        return A.Ident(tok.text, tok.pos)

    def object_literal(self) -> A.Expr:
        open_tok = self.advance()
        self.enter()
        entries: list[tuple[str, A.Expr]] = []
        while not self.is_op("}"):
            key = self.tok
            if key.kind not in ("str", "ident"):
                raise self.fail("a key (a string or a name) or '}'")
            self.advance()
            self.expect(":")
            entries.append((key.text, self.expression(0)))
            if not self.is_op(","):
                break
            self.advance()
        self.expect("}")
        self.nesting -= 1
        return A.ObjectLit(tuple(entries), open_tok.pos)
