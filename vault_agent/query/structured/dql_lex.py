"""The tokens of a Dataview query (the lexer of dql_parse.py).

Keywords are case-insensitive names; identifiers may hold `-` (`time-played`, as in
Dataview); `date(…)` and `dur(…)` holding a literal (a shorthand, an ISO date, a
duration) are one token of raw text; `#tag` and `[[link]]` are tokens of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured.values import parse_duration

_IDENT = re.compile(r"[^\W\d][\w-]*", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_TAG = re.compile(r"#[^\s,;.:!?'\"`()\[\]{}]+")
_SPACE = re.compile(r"(?:\s+|//[^\n]*)+")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_OPS = ("!=", "<=", ">=", "=>", "&&", "||", "=", "<", ">", "+", "-", "*", "/", "%", "!", "&", "|",
        "(", ")", "[", "]", "{", "}", ",", ".", ":")  # fmt: skip
COMMANDS = ("from", "where", "sort", "limit", "group", "flatten")
UNSUPPORTED_TYPES = {"calendar": "CALENDAR"}


@dataclass(frozen=True)
class Token:
    kind: str  # ident number string tag link date dur op eof
    text: str
    pos: int
    end: int

    def describe(self) -> str:
        if self.kind == "eof":
            return "the end of the query"
        if self.kind == "op":
            return f"'{self.text}'"
        if self.kind == "ident" and self.text.lower() in (*COMMANDS, "and", "or", "as", "asc", "desc", "by"):
            return f"'{self.text.upper()}'"
        return {"ident": "a name", "number": "a number", "string": "a string", "tag": "a tag", "link": "a link",
                "date": "a date", "dur": "a duration"}[self.kind]  # fmt: skip


def where(text: str, pos: int) -> str:
    """`line L, column C` of a character offset."""
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


def tokens(text: str) -> list[Token]:
    """The tokens of a query, ending with `eof`.

    Raises:
        InvalidQuery: an unexpected character, an unclosed string or link.
    """
    out: list[Token] = []
    pos = 0
    n = len(text)
    while True:
        m = _SPACE.match(text, pos)
        if m:
            pos = m.end()
        if pos >= n:
            out.append(Token("eof", "", pos, pos))
            return out
        ch = text[pos]
        if ch == '"':
            end, value = _string(text, pos)
            out.append(Token("string", value, pos, end))
            pos = end
        elif text.startswith("[[", pos):
            end = text.find("]]", pos + 2)
            if end < 0:
                raise InvalidQuery(f"dql: unclosed link at {where(text, pos)}: expected ']]'")
            out.append(Token("link", text[pos + 2 : end], pos, end + 2))
            pos = end + 2
        elif ch == "#" and (m := _TAG.match(text, pos)):
            out.append(Token("tag", m.group()[1:], pos, m.end()))
            pos = m.end()
        elif ch.isdigit() and (m := _NUMBER.match(text, pos)):
            out.append(Token("number", m.group(), pos, m.end()))
            pos = m.end()
        elif m := _IDENT.match(text, pos):
            word = m.group()
            # `a-b` is one name (Dataview), but not a trailing `-` (`x- 1` is subtraction)
            word = word.rstrip("-") or word
            raw = _raw_literal(text, word, pos + len(word))
            if raw is not None:  # date(2024-05-01T10:00), dur(1 s, 2 m): raw text, not tokens
                out.append(Token(word.lower(), raw[0], pos, raw[1]))
                pos = raw[1]
                continue
            out.append(Token("ident", word, pos, pos + len(word)))
            pos += len(word)
        else:
            op = next((o for o in _OPS if text.startswith(o, pos)), None)
            if op is None:
                raise InvalidQuery(f"dql: unexpected character at {where(text, pos)}")
            out.append(Token("op", op, pos, pos + len(op)))
            pos += len(op)


def _raw_literal(text: str, word: str, after: int) -> tuple[str, int] | None:
    """(raw text, end) of `date(…)` / `dur(…)` right after `word` when it is a literal (a
    shorthand, an ISO date, a duration); else None (a function call: `date(due)`)."""
    name = word.lower()
    if name not in ("date", "dur") or not text.startswith("(", after):
        return None
    close = text.find(")", after)
    if close < 0:
        return None
    raw = text[after + 1 : close].strip()
    if name == "date":
        literal = raw.lower() in _SHORTHANDS or _ISO.fullmatch(raw) is not None
    else:
        literal = parse_duration(raw) is not None
    return (raw, close + 1) if literal else None


def _string(text: str, pos: int) -> tuple[int, str]:
    out: list[str] = []
    i = pos + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "t": "\t"}.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if ch == '"':
            return i + 1, "".join(out)
        out.append(ch)
        i += 1
    raise InvalidQuery(f"dql: unclosed string at {where(text, pos)}: expected '\"'")


_SHORTHANDS = frozenset(
    ("now", "today", "yesterday", "tomorrow", "sow", "eow", "som", "eom", "soy", "eoy", "start-of-week",
     "end-of-week", "start-of-month", "end-of-month", "start-of-year", "end-of-year")
)  # fmt: skip
