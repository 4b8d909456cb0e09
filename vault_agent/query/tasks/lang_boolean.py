"""Boolean filter lines: `(not done) AND ((due today) OR NOT (tag includes #x))`.

The plugin's rules (src/Query/Filter/BooleanDelimiters.ts, BooleanPreprocessor.ts, then the
boon-js expression parser), ported as written:

- every filter is wrapped in one kind of delimiter for the whole line: `(…)`, `[…]`,
  `{…}` or `"…"` (found from the first and last characters after any leading capitals);
- the line is cut at `) AND (`, `) OR NOT (`, `NOT (` … (operators in capitals, spaces
  optional); what is left between delimiters is a filter, parsed like a line of its own
  (itself possibly a boolean line with other delimiters);
- operators bind `NOT` first, then `XOR`, `AND`, `OR`, each left to right.

A sub-filter that is not one vault-agent runs makes the whole line INVALID_QUERY: a part of a
boolean is never guessed or taken as true.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vault_agent.errors import InvalidQuery
from vault_agent.query.tasks.lang_ast import BoolOp, BoolOpName, Filter, Not

MAX_DEPTH = 50  # nested parentheses / boolean lines inside sub-filters

_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ('"', '"'))
_LEADING_CAPITALS = re.compile(r"^[A-Z ]*\s*(.*)")
_TOKEN = re.compile(r'\s*(?:(\()|(\))|"(f\d+)"|(f\d+)\b|(AND|OR|XOR|NOT)\b)')

SubParser = Callable[[str, int], Filter]  # a filter text and the nesting depth → its node


@dataclass(frozen=True)
class Delimiters:
    open: str
    close: str

    def open_class(self) -> str:
        return "[" + re.escape(self.open) + "]"

    def close_class(self) -> str:
        return "[" + re.escape(self.close) + "]"

    def both(self) -> str:
        return self.open if self.open == self.close else self.open + self.close


def looks_boolean(line: str) -> bool:
    """The plugin's BooleanField test: an operator before an opening delimiter, or any
    delimited text (tried only after every other instruction failed)."""
    opens, closes = "".join(o for o, _ in _PAIRS), "".join(c for _, c in _PAIRS)
    open_cls, close_cls = "[" + re.escape(opens) + "]", "[" + re.escape(closes) + "]"
    return re.search(rf"(AND|OR|XOR|NOT)\s*{open_cls}|{open_cls}.+{close_cls}", line) is not None


def delimiters_of(line: str) -> Delimiters | None:
    """The one delimiter pair a boolean line uses, or None when its ends do not match."""
    rest = _LEADING_CAPITALS.match(line.strip())
    body = rest.group(1) if rest else ""
    for opening, closing in _PAIRS:
        if body[:1] == opening and body[-1:] == closing:
            return Delimiters(opening, closing)
    return None


def split_line(line: str, d: Delimiters) -> list[str]:
    """BooleanPreprocessor.splitLine: operators with their delimiters, and filter texts."""
    binary = rf"({d.close_class()}\s*(?:AND|OR|AND +NOT|OR +NOT|XOR)\s*{d.open_class()})"
    unary = rf"(NOT\s*{d.open_class()})"
    opening = "(^[" + re.escape(d.open + " ") + "]*)"
    closing = "([" + re.escape(d.close + " ") + "]*$)"
    parts = [p for s in re.split(binary, line) for p in re.split(unary, s) if p]
    parts = [p for s in parts for p in re.split(opening, s) if p]
    return [p for s in parts for p in re.split(closing, s) if p]


def _is_filter(part: str, d: Delimiters) -> bool:
    both = "[" + re.escape(" " + d.both()) + "]"
    not_filter = (
        rf"^{both}+$",
        rf"^ *{d.close_class()} *(AND|OR|XOR) *{d.open_class()} *$",
        rf"^(AND|OR|XOR|NOT) *{d.open_class()}$",
        rf"^{d.close_class()} *(AND|OR|XOR)$",
        r"^(AND|OR|XOR|NOT)$",
    )
    return not any(re.search(p, part) for p in not_filter)


def simplify(line: str, d: Delimiters) -> tuple[str, list[str]]:
    """The line with each filter replaced by `f1`, `f2`…, and the filters in order."""
    simplified, filters = "", []
    for part in split_line(line, d):
        if _is_filter(part, d):
            filters.append(part)
            simplified += f"f{len(filters)}"
        else:
            simplified += part
    simplified = re.sub(rf"({d.close_class()})([A-Z])", r"\1 \2", simplified)
    simplified = re.sub(rf"([A-Z])({d.open_class()})", r"\1 \2", simplified)
    if d.open not in ('"', "("):
        simplified = simplified.replace(d.open, "(").replace(d.close, ")")
    return simplified, filters


class _Expr:
    """Precedence parser over the simplified line (boon-js: NOT > XOR > AND > OR)."""

    def __init__(self, tokens: list[tuple[str, str]], leaves: list[Filter], where: str, depth: int) -> None:
        self.tokens, self.leaves, self.where, self.depth = tokens, leaves, where, depth
        self.pos = 0

    def error(self, what: str) -> InvalidQuery:
        return InvalidQuery(
            f"tasks query: {self.where}: malformed boolean combination ({what}); wrap each filter in one "
            'kind of delimiter, (…), […], {…} or "…", joined by AND, OR, XOR, NOT (see docs/tasks.md)'
        )

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, kind: str, value: str | None = None) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == kind and (value is None or tok[1] == value):
            self.pos += 1
            return True
        return False

    def binary(self, ops: tuple[BoolOpName, ...], operand: Callable[[int], Filter], depth: int) -> Filter:
        left = operand(depth)
        while (tok := self.peek()) is not None and tok[0] == "op" and tok[1] in ops:
            self.pos += 1
            left = BoolOp(tok[1], left, operand(depth))
        return left

    def any_of(self, depth: int) -> Filter:
        if depth > MAX_DEPTH:
            raise self.error(f"nested more than {MAX_DEPTH} deep")
        return self.binary(("OR",), self.all_of, depth)

    def all_of(self, depth: int) -> Filter:
        return self.binary(("AND",), self.one_of, depth)

    def one_of(self, depth: int) -> Filter:
        return self.binary(("XOR",), self.negation, depth)

    def negation(self, depth: int) -> Filter:
        if self.take("op", "NOT"):
            return Not(self.negation(depth + 1))
        return self.atom(depth)

    def atom(self, depth: int) -> Filter:
        tok = self.peek()
        if tok is None:
            raise self.error("a filter is missing")
        if self.take("open"):
            inner = self.any_of(depth + 1)
            if not self.take("close"):
                raise self.error("unbalanced delimiters")
            return inner
        if self.take("leaf"):
            return self.leaves[int(tok[1]) - 1]
        raise self.error("an operator is out of place")


def _tokens(simplified: str) -> list[tuple[str, str]] | None:
    out, pos = [], 0
    while pos < len(simplified):
        if simplified[pos:].strip() == "":
            break
        m = _TOKEN.match(simplified, pos)
        if m is None:
            return None
        kind = ("open", "close", "leaf", "leaf", "op")[m.lastindex - 1 if m.lastindex else 0]
        value = m.group(m.lastindex or 0)
        out.append((kind, value[1:] if kind == "leaf" else value))
        pos = m.end()
    return out


def parse_boolean(line: str, where: str, sub_parser: SubParser, depth: int = 0) -> Filter:
    """A boolean line as one filter node; each delimited filter read by `sub_parser`.

    Raises:
        InvalidQuery: mixed or missing delimiters, malformed operators or parentheses, or a
            sub-filter that is not one vault-agent runs (the message says which).
    """
    if depth > MAX_DEPTH:
        raise InvalidQuery(f"tasks query: {where}: boolean combinations nested more than {MAX_DEPTH} deep")
    d = delimiters_of(line)
    if d is None:
        raise InvalidQuery(
            f"tasks query: {where}: in a boolean combination every filter must be inside one kind of "
            'delimiter, (…), […], {…} or "…", not mixed (see docs/tasks.md)'
        )
    simplified, texts = simplify(line, d)
    leaves = [sub_parser(text.strip(), depth + 1) for text in texts]
    tokens = _tokens(simplified)
    expr = _Expr(tokens or [], leaves, where, depth)
    if tokens is None or not tokens:
        raise expr.error("an unexpected character")
    node = expr.any_of(0)
    if expr.pos != len(tokens):
        raise expr.error("unbalanced delimiters or a missing operator")
    return node
