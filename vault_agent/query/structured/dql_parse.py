"""A recursive-descent parser for the read subset of Dataview's query language.

No maintained Python parser of DQL exists (Dataview's own is parsimmon, in TypeScript), and
the subset is small, so it is parsed here by hand, following Dataview's grammar
(`src/query/parse.ts`, `src/expression/parse.ts`): keywords are case-insensitive,
identifiers may hold `-` (`time-played`), `date(…)` and `dur(…)` take raw text.

Every error is `InvalidQuery` with the position (line:column) and what was expected, or
names the unsupported construct (CALENDAR, GROUP BY, FLATTEN, lambdas, objects,
`this`, JavaScript). Messages never quote the query's own text beyond grammar words.
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_expr_parse import ExprParser
from vault_agent.query.structured.dql_lex import COMMANDS, UNSUPPORTED_TYPES, where

MAX_DQL_CHARS = 4_000


class Parser(ExprParser):
    """One query text → `dql_ast.Query`: commands, columns, sorts and sources (expressions in
    the base class)."""

    def query(self) -> A.Query:
        tok = self.tok
        word = tok.text.lower() if tok.kind == "ident" else ""
        if word in UNSUPPORTED_TYPES:
            raise self.unsupported(UNSUPPORTED_TYPES[word])
        if word not in ("list", "table", "task"):
            raise self.fail("a query type (LIST, TABLE or TASK)")
        self.next()
        without_id = False
        if word != "task" and self.is_word("without"):
            self.next()
            if not self.is_word("id"):
                raise self.fail("'ID' after 'WITHOUT'")
            self.next()
            without_id = True
        columns = self.columns(word) if word != "task" else []
        source = None
        if self.is_word("from"):
            self.next()
            source = self.source()
        conds: list[A.Expr] = []
        sort: list[A.SortItem] = []
        limit: int | None = None
        commands: list[str] = []
        while self.tok.kind != "eof":
            tok = self.tok
            cmd = tok.text.lower() if tok.kind == "ident" else ""
            if cmd == "from":
                raise InvalidQuery(
                    f"dql: FROM at {where(self.text, tok.pos)} must come once, right after the query type"
                )
            if cmd == "group":
                raise self.unsupported("GROUP BY")
            if cmd == "flatten":
                raise self.unsupported("FLATTEN")
            if cmd not in ("where", "sort", "limit"):
                raise self.fail("a data command (WHERE, SORT or LIMIT)")
            self.next()
            commands.append(cmd)
            if cmd == "where":
                conds.append(self.expr())
            elif cmd == "sort":
                if sort:
                    raise InvalidQuery(
                        f"dql: a second SORT at {where(self.text, tok.pos)}: give every key in one SORT a, b"
                    )
                sort = self.sort_items()
            else:
                if limit is not None:
                    raise InvalidQuery(f"dql: a second LIMIT at {where(self.text, tok.pos)}")
                num = self.tok
                if num.kind != "number" or "." in num.text:
                    raise self.fail("a whole number after LIMIT")
                self.next()
                limit = int(num.text)
        _check_order(commands)
        return A.Query(
            kind="list" if word == "list" else "task" if word == "task" else "table",
            without_id=without_id,
            columns=tuple(columns),
            source=source,
            where=tuple(conds),
            sort=tuple(sort),
            limit=limit,
            commands=tuple(commands),
        )

    def columns(self, kind: str) -> list[A.Column]:
        out: list[A.Column] = []
        if self.is_word(*COMMANDS) or self.tok.kind == "eof":
            return out
        while True:
            start = self.tok.pos
            expr = self.expr()
            header = self.text[start : self.toks[self.i - 1].end].strip()
            if self.is_word("as"):
                self.next()
                tok = self.next()
                if tok.kind not in ("string", "ident"):
                    raise self.fail("a column name after AS", tok)
                header = tok.text
            out.append(A.Column(expr, header))
            if kind == "list":
                if self.is_op(","):
                    raise InvalidQuery(
                        f"dql: LIST shows one expression at {where(self.text, self.tok.pos)}; use TABLE for several"
                    )
                return out
            if not self.is_op(","):
                return out
            self.next()

    def sort_items(self) -> list[A.SortItem]:
        items: list[A.SortItem] = []
        while True:
            expr = self.expr()
            descending = False
            if self.is_word("asc", "ascending"):
                self.next()
            elif self.is_word("desc", "descending"):
                self.next()
                descending = True
            items.append(A.SortItem(expr, descending))
            if not self.is_op(","):
                return items
            self.next()

    # ------------------------------------------------------------------ sources
    def source(self) -> A.Source:
        self.enter()
        left = self.source_and()
        while self.is_word("or") or self.is_op("|", "||"):
            tok = self.next()
            left = A.SOr(tok.pos, left, self.source_and())
        self.depth -= 1
        return left

    def source_and(self) -> A.Source:
        left = self.source_not()
        while self.is_word("and") or self.is_op("&", "&&"):
            tok = self.next()
            left = A.SAnd(tok.pos, left, self.source_not())
        return left

    def source_not(self) -> A.Source:
        if self.is_op("-", "!"):
            tok = self.next()
            self.enter()
            item = self.source_not()
            self.depth -= 1
            return A.SNot(tok.pos, item)
        return self.source_atom()

    def source_atom(self) -> A.Source:
        tok = self.tok
        if tok.kind == "tag":
            self.next()
            return A.STag(tok.pos, tok.text)
        if tok.kind == "string":
            self.next()
            return A.SFolder(tok.pos, tok.text)
        if tok.kind == "link":
            self.next()
            return A.SLink(tok.pos, self.link_target(tok), False)
        if self.is_word("outgoing"):
            self.next()
            self.expect_op("(")
            link = self.tok
            if link.kind != "link":
                raise self.fail("a link [[note]] inside outgoing(…)")
            self.next()
            self.expect_op(")")
            return A.SLink(tok.pos, self.link_target(link), True)
        if self.is_op("("):
            self.next()
            inner = self.source()
            self.expect_op(")")
            return inner
        if self.is_word("csv"):
            raise self.unsupported("a csv(…) source")
        raise self.fail('a source: #tag, "folder", [[note]] or outgoing([[note]])')


def _check_order(commands: list[str]) -> None:
    """WHERE before SORT before LIMIT: other orders change the meaning in Dataview (commands
    run in order) and are refused rather than answered differently."""
    rank = {"where": 0, "sort": 1, "limit": 2}
    for a, b in zip(commands, commands[1:], strict=False):
        if rank[b] < rank[a]:
            raise InvalidQuery(
                f"dql: {b.upper()} after {a.upper()} is not supported; write WHERE, then SORT, then LIMIT"
            )


def parse_dql(text: str) -> A.Query:
    """Parse one query.

    Raises:
        InvalidQuery: a syntax error (position, what was expected) or an unsupported construct.
    """
    if len(text) > MAX_DQL_CHARS:
        raise InvalidQuery(f"dql: a query may hold at most {MAX_DQL_CHARS} characters")
    if not text.strip():
        raise InvalidQuery("dql: the query is empty; start with LIST, TABLE or TASK")
    return Parser(text).query()
