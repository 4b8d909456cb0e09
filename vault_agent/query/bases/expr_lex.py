"""The tokens of a Bases expression (the lexer of expr_parse.py).

JavaScript's lexical rules, as far as the language uses them: strings in either quote with
JS escapes, numbers with an optional fraction and exponent (`5.isEmpty()` is the number 5
and a method, as the docs write it), names of Unicode letters, digits, `_` and `$`
(`$` and digits not first), and regex literals `/…/flags` where an operand may start
(elsewhere `/` divides).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from vault_agent.query.bases.expr_ast import Position
from vault_agent.query.bases.expr_errors import ExpressionSyntaxError

TokenKind = Literal["num", "str", "regex", "ident", "op", "eof"]

_NUMBER = re.compile(r"(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_SPACE = re.compile(r"\s+")
_OPS = ("&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!",
        "(", ")", "[", "]", "{", "}", ",", ".", ":")  # fmt: skip
REGEX_FLAGS = frozenset("dgimsuy")
# After one of these an operand starts, so `/` opens a regex literal.
_OPERAND_NEXT = frozenset(("(", "[", "{", ",", ":", "!", "&&", "||", "==", "!=", "<", "<=", ">", ">=",
                           "+", "-", "*", "/", "%"))  # fmt: skip
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: TokenKind
    text: str  # the value: a string's characters, a regex's `pattern/flags`, an operator
    pos: Position

    def describe(self) -> str:
        if self.kind == "eof":
            return "the end of the expression"
        if self.kind == "op":
            return f"'{self.text}'"
        return {"num": "a number", "str": "a string", "regex": "a regular expression", "ident": "a name"}[
            self.kind
        ]


class _Positions:
    """Offset → `Position`, from the offsets where lines start."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def at(self, offset: int) -> Position:
        line = bisect.bisect_right(self.starts, offset)
        return Position(offset, line, offset - self.starts[line - 1] + 1)


def _is_name_start(ch: str) -> bool:
    return ch == "$" or ch.isidentifier()


def _is_name_part(ch: str) -> bool:
    return ch == "$" or ("a" + ch).isidentifier()


def tokens(text: str) -> list[Token]:
    """The tokens of an expression, ending with `eof`.

    Raises:
        ExpressionSyntaxError: an unexpected character, an unclosed string or regex, a bad flag.
    """
    where = _Positions(text)
    out: list[Token] = []
    pos, n = 0, len(text)
    while True:
        m = _SPACE.match(text, pos)
        if m:
            pos = m.end()
        if pos >= n:
            out.append(Token("eof", "", where.at(pos)))
            return out
        ch = text[pos]
        operand_next = not out or (out[-1].kind == "op" and out[-1].text in _OPERAND_NEXT)
        if ch in "\"'":
            end, value = _string(text, pos, where)
            out.append(Token("str", value, where.at(pos)))
        elif "0" <= ch <= "9" or (ch == "." and operand_next and "0" <= text[pos + 1 : pos + 2] <= "9"):
            m = _NUMBER.match(text, pos)
            assert m is not None  # a digit, or '.' before a digit, always starts a number
            end = m.end()
            out.append(Token("num", m.group(), where.at(pos)))
        elif _is_name_start(ch):
            end = pos + 1
            while end < n and _is_name_part(text[end]):
                end += 1
            out.append(Token("ident", text[pos:end], where.at(pos)))
        elif ch == "/" and operand_next:
            end = _regex(text, pos, where)
            out.append(Token("regex", text[pos + 1 : end], where.at(pos)))
        elif text.startswith(("===", "!=="), pos) or (ch == "=" and not text.startswith("==", pos)):
            wrote = text[pos : pos + 3] if text.startswith(("===", "!=="), pos) else "="
            instead = "!=" if wrote == "!==" else "=="
            raise ExpressionSyntaxError(
                f"'{wrote}' is not an operator here: compare with '{instead}'", where.at(pos)
            )
        else:
            op = next((o for o in _OPS if text.startswith(o, pos)), None)
            if op is None:
                raise ExpressionSyntaxError(f"unexpected character {ch!r}", where.at(pos))
            end = pos + len(op)
            out.append(Token("op", op, where.at(pos)))
        pos = end


def _string(text: str, start: int, where: _Positions) -> tuple[int, str]:
    quote = text[start]
    out: list[str] = []
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return i + 1, "".join(out)
        if ch in "\r\n":
            break
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            break
        esc = text[i + 1]
        if esc in "ux":
            value, i = _code_escape(text, i, where)
            out.append(value)
            continue
        if esc in "\r\n":  # a line continuation: backslash-newline is nothing
            i += 3 if text.startswith("\r\n", i + 1) else 2
            continue
        out.append(_ESCAPES.get(esc, esc))
        i += 2
    raise ExpressionSyntaxError(f"unclosed string: expected {quote}", where.at(start))


def _code_escape(text: str, i: int, where: _Positions) -> tuple[str, int]:
    """`\\xHH`, `\\uHHHH` or `\\u{H…}` at `i` (the backslash): (the character, the next index)."""
    esc = text[i + 1]
    if esc == "u" and text.startswith("{", i + 2):
        close = text.find("}", i + 3)
        digits, after = text[i + 3 : close], close + 1
    else:
        width = 2 if esc == "x" else 4
        digits, after = text[i + 2 : i + 2 + width], i + 2 + width
        if len(digits) != width:
            digits = ""
    code = int(digits, 16) if re.fullmatch(r"[0-9a-fA-F]{1,6}", digits) else -1
    # a lone surrogate could not be written out as UTF-8: write the character, or \u{…}
    if not 0 <= code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise ExpressionSyntaxError(f"invalid \\{esc} escape in a string", where.at(i))
    return chr(code), after


def _regex(text: str, start: int, where: _Positions) -> int:
    """The end of the regex literal starting at `start` (after its flags)."""
    i, n, in_class = start + 1, len(text), False
    while i < n:
        ch = text[i]
        if ch in "\r\n":
            break
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            if i == start + 1:
                break  # `//` is not an empty regex in JavaScript
            end = i + 1
            while end < n and _is_name_part(text[end]):
                end += 1
            flags = text[i + 1 : end]
            if any(f not in REGEX_FLAGS for f in flags) or len(set(flags)) != len(flags):
                raise ExpressionSyntaxError("invalid regular expression flags", where.at(i + 1))
            return end
        i += 1
    raise ExpressionSyntaxError("unclosed regular expression: expected '/'", where.at(start))
