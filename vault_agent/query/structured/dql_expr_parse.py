"""The expression half of the DQL parser, and the token cursor both halves share.

Dataview's expression grammar (`src/expression/parse.ts`): or → and → comparison →
additive → term → unary → postfix (fields, indexes, calls) → primary. Recursion is bounded
by MAX_DEPTH; errors are `InvalidQuery` with the position and what was expected.
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_lex import COMMANDS, Token, tokens, where

MAX_DEPTH = 64  # nesting of parentheses / operators: a bound on recursion


def _link_target(inner: str) -> str:
    """A link's target: before `|display` and `#heading`."""
    target = inner.split("|", 1)[0]
    return target.split("#", 1)[0].strip()


class ExprParser:
    """A token cursor over one query text, and the expression grammar."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokens(text)
        self.i = 0
        self.depth = 0

    # ------------------------------------------------------------------ tokens
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def next(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def is_word(self, *words: str) -> bool:
        return self.tok.kind == "ident" and self.tok.text.lower() in words

    def is_op(self, *ops: str) -> bool:
        return self.tok.kind == "op" and self.tok.text in ops

    def fail(self, expected: str, tok: Token | None = None) -> InvalidQuery:
        tok = tok or self.tok
        return InvalidQuery(
            f"dql: expected {expected} at {where(self.text, tok.pos)}, found {tok.describe()}"
        )

    def unsupported(self, what: str, tok: Token | None = None) -> InvalidQuery:
        tok = tok or self.tok
        return InvalidQuery(
            f"dql: {what} at {where(self.text, tok.pos)} is not supported; "
            "vault_query answers LIST and TABLE queries with FROM, WHERE, SORT and LIMIT (see docs/query.md)"
        )

    def expect_op(self, op: str) -> Token:
        if not self.is_op(op):
            raise self.fail(f"'{op}'")
        return self.next()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise InvalidQuery(
                f"dql: nested deeper than {MAX_DEPTH} levels at {where(self.text, self.tok.pos)}"
            )

    # ------------------------------------------------------------------ query
    def link_target(self, tok: Token) -> str:
        target = _link_target(tok.text)
        if not target:
            raise self.unsupported("[[]] (the current note: a query here runs outside any note)", tok)
        return target

    # ------------------------------------------------------------------ expressions
    def expr(self) -> A.Expr:
        self.enter()
        left = self.and_expr()
        while self.is_word("or") or self.is_op("|", "||"):
            tok = self.next()
            left = A.Binary(tok.pos, "or", left, self.and_expr())
        self.depth -= 1
        return left

    def and_expr(self) -> A.Expr:
        left = self.compare()
        while self.is_word("and") or self.is_op("&", "&&"):
            tok = self.next()
            left = A.Binary(tok.pos, "and", left, self.compare())
        return left

    def compare(self) -> A.Expr:
        left = self.additive()
        if self.is_op("=", "!=", "<", "<=", ">", ">="):
            tok = self.next()
            right = self.additive()
            left = A.Binary(tok.pos, tok.text, left, right)
            if self.is_op("=", "!=", "<", "<=", ">", ">="):
                raise self.fail("'AND' or 'OR' between two comparisons")
        return left

    def additive(self) -> A.Expr:
        left = self.term()
        while self.is_op("+", "-"):
            tok = self.next()
            left = A.Binary(tok.pos, tok.text, left, self.term())
        return left

    def term(self) -> A.Expr:
        left = self.unary()
        while self.is_op("*", "/", "%"):
            tok = self.next()
            left = A.Binary(tok.pos, tok.text, left, self.unary())
        return left

    def unary(self) -> A.Expr:
        if self.is_op("!", "-"):
            tok = self.next()
            self.enter()
            operand = self.unary()
            self.depth -= 1
            return A.Unary(tok.pos, "!" if tok.text == "!" else "-", operand)
        return self.postfix()

    def postfix(self) -> A.Expr:
        node = self.primary()
        while True:
            if self.is_op("."):
                self.next()
                tok = self.next()
                if tok.kind != "ident":
                    raise self.fail("a field name after '.'", tok)
                node = A.Member(tok.pos, node, tok.text)
            elif self.is_op("["):
                tok = self.next()
                index = self.expr()
                self.expect_op("]")
                node = A.Index(tok.pos, node, index)
            elif self.is_op("("):
                raise self.unsupported("calling the result of an expression")
            else:
                return node

    def primary(self) -> A.Expr:
        tok = self.tok
        if tok.kind == "number":
            self.next()
            return A.Num(tok.pos, float(tok.text))
        if tok.kind == "string":
            self.next()
            return A.Str(tok.pos, tok.text)
        if tok.kind == "link":
            self.next()
            return A.LinkLit(tok.pos, self.link_target(tok))
        if tok.kind == "date":
            self.next()
            return A.DateLit(tok.pos, tok.text)
        if tok.kind == "dur":
            self.next()
            return A.DurLit(tok.pos, tok.text)
        if tok.kind == "tag":
            raise self.fail('an expression (a tag is written "#tag" inside WHERE)')
        if self.is_op("("):
            self.next()
            if (
                self.tok.kind == "ident"
                and self.toks[self.i + 1].kind == "op"
                and self.toks[self.i + 1].text == ","
            ):
                raise self.unsupported("a lambda (x, y) => …")
            inner = self.expr()
            self.expect_op(")")
            if self.is_op("=>"):
                raise self.unsupported("a lambda (x) => …")
            return inner
        if self.is_op("["):
            self.next()
            items: list[A.Expr] = []
            if not self.is_op("]"):
                while True:
                    items.append(self.expr())
                    if not self.is_op(","):
                        break
                    self.next()
            self.expect_op("]")
            return A.ListLit(tok.pos, tuple(items))
        if self.is_op("{"):
            raise self.unsupported("an object literal { … }")
        if tok.kind != "ident":
            raise self.fail("an expression")
        word = tok.text.lower()
        self.next()
        if word in ("true", "false"):
            return A.Bool(tok.pos, word == "true")
        if word == "null":
            return A.Null(tok.pos)
        if word == "this":
            raise self.unsupported("'this' (the current note: a query here runs outside any note)", tok)
        if word in ("dv", "app") and self.is_op("."):
            raise self.unsupported("JavaScript (dataviewjs)", tok)
        if self.is_op("("):
            self.next()
            args: list[A.Expr] = []
            if not self.is_op(")"):
                while True:
                    args.append(self.expr())
                    if not self.is_op(","):
                        break
                    self.next()
            if self.is_op("=>"):
                raise self.unsupported("a lambda (x) => …")
            self.expect_op(")")
            return A.Call(tok.pos, word, tuple(args))
        if word in COMMANDS and word != "from":
            raise self.fail("an expression", tok)
        return A.Ident(tok.pos, tok.text)
