"""String and regular-expression methods (Functions.md "String type", "Regular expression type").

Strings are Python strings: lengths, indexes and `slice` count code points (JavaScript counts
UTF-16 units; they differ only for characters outside the Basic Multilingual Plane).
`contains`, `startsWith`, `endsWith` with a null argument are false (a missing value is in
nothing), with another non-string argument compare its text. `title()` upper-cases the first
letter of each word and keeps the rest.

Regular expressions run on the `regex` package (JavaScript's backtracking features:
lookbehind, backreferences, named groups `(?<n>…)`) with Unicode semantics, each call
bounded by `regex_seconds` of the budget (BudgetExceeded past it). Flags: `i m s u g`
(`g`: `replace` replaces every match), `d` accepted and ignored; `y` (sticky) is refused.
In `replace`, `$1`…`$99`, `$<name>`, `$&` and `$$` work as in JavaScript.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import regex

from vault_agent.query.bases.builtins import Context, Table, eager, want_int, want_str
from vault_agent.query.bases.expr_ast import Position
from vault_agent.query.bases.expr_errors import (
    BudgetExceeded,
    EvaluationError,
    ExpressionSyntaxError,
    Unsupported,
)
from vault_agent.query.bases.values import RegexValue, Value, to_text, type_name

_REPLACEMENT = regex.compile(r"\$(\$|&|\d{1,2}|<[^>]*>)")


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str, flags: str) -> regex.Pattern[str]:
    mode = regex.V0
    mode |= regex.IGNORECASE if "i" in flags else 0
    mode |= regex.MULTILINE if "m" in flags else 0
    mode |= regex.DOTALL if "s" in flags else 0
    return regex.compile(pattern, mode)


def compile_regex(pattern: str, flags: str, pos: Position) -> RegexValue:
    """A regex value for `/pattern/flags`.

    Raises:
        Unsupported: the `y` (sticky) flag.
        ExpressionSyntaxError: a pattern the engine cannot compile.
    """
    if "y" in flags:
        raise Unsupported("the regular expression flag 'y' (sticky)", pos)
    try:
        return RegexValue(pattern, flags, _compiled(pattern, flags))
    except (regex.error, OverflowError, RecursionError) as err:
        raise ExpressionSyntaxError("invalid regular expression", pos) from err


def timed(ctx: Context, pos: Position, run: Callable[[float], object]) -> object:
    """Run one regex call with the budget's timeout.

    Raises:
        BudgetExceeded: the call ran past `regex_seconds` (catastrophic backtracking).
    """
    seconds = ctx.budget.limits.regex_seconds
    try:
        return run(seconds)
    except TimeoutError as err:
        raise BudgetExceeded(
            f"a regular expression ran longer than {seconds} s (a pattern that backtracks catastrophically?)",
            pos,
        ) from err


def _needle(value: Value) -> str | None:
    return None if value is None else to_text(value)


def _charge(ctx: Context, text: str, pos: Position) -> None:
    ctx.budget.step(1 + len(text) // 64, pos)


def _contains(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "contains()", pos)
    needle = _needle(args[0])
    _charge(ctx, text, pos)
    return needle is not None and needle in text


def _contains_all(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "containsAll()", pos)
    _charge(ctx, text, pos)
    return all((n := _needle(a)) is not None and n in text for a in args)


def _contains_any(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "containsAny()", pos)
    _charge(ctx, text, pos)
    return any((n := _needle(a)) is not None and n in text for a in args)


def _starts_with(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    needle = _needle(args[0])
    return needle is not None and want_str(s, "startsWith()", pos).startswith(needle)


def _ends_with(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    needle = _needle(args[0])
    return needle is not None and want_str(s, "endsWith()", pos).endswith(needle)


def _made(ctx: Context, text: str, pos: Position) -> str:
    ctx.budget.allocate(len(text), pos, string=True)
    return text


def _lower(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    return _made(ctx, want_str(s, "lower()", pos).lower(), pos)


def _title(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "title()", pos)
    words = regex.sub(r"(?<![\p{L}\p{N}'’])\p{L}", lambda m: m.group().upper(), text)
    return _made(ctx, words, pos)


def _trim(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    return want_str(s, "trim()", pos).strip()


def _repeat(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "repeat()", pos)
    count = want_int(args[0], "repeat()", pos)
    if count < 0:
        raise EvaluationError("repeat() needs a count of 0 or more", pos)
    ctx.budget.allocate(len(text) * count, pos, string=True)
    return text * count


def _reverse(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    return _made(ctx, want_str(s, "reverse()", pos)[::-1], pos)


def _slice(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "slice()", pos)
    start = want_int(args[0], "slice()", pos)
    end = want_int(args[1], "slice()", pos) if len(args) > 1 and args[1] is not None else len(text)
    return text[start:end]


def _split(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "split()", pos)
    limit = want_int(args[1], "split()", pos) if len(args) > 1 and args[1] is not None else None
    sep = args[0]
    parts: list[str]
    if isinstance(sep, RegexValue):
        found = timed(ctx, pos, lambda t: sep.compiled.split(text, timeout=t))
        parts = [p if p is not None else "" for p in found]  # type: ignore[attr-defined]  # split's list
    elif sep == "":
        parts = list(text)
    else:
        parts = text.split(want_str(sep, "split()", pos))
    if limit is not None:
        parts = parts[: max(limit, 0)]
    ctx.budget.allocate(len(text) + len(parts), pos)
    return list[Value](parts)


def _replace(ctx: Context, s: Value, args: list[Value], pos: Position) -> Value:
    text = want_str(s, "replace()", pos)
    pattern, replacement = args[0], want_str(args[1], "replace()", pos)
    if isinstance(pattern, RegexValue):
        count = 0 if "g" in pattern.flags else 1
        expand = _expander(replacement)
        out = timed(ctx, pos, lambda t: pattern.compiled.sub(expand, text, count=count, timeout=t))
        assert isinstance(out, str)
    else:
        needle = want_str(pattern, "replace()", pos)
        if needle:
            ctx.budget.allocate(len(text) + text.count(needle) * len(replacement), pos, string=True)
        out = text.replace(needle, replacement) if needle else replacement + text
    return _made(ctx, out, pos)


def _expander(template: str) -> Callable[[regex.Match[str]], str]:
    """JavaScript's replacement patterns as a function of the match."""

    def expand(match: regex.Match[str]) -> str:
        def one(m: regex.Match[str]) -> str:
            token = m.group(1)
            if token == "$":
                return "$"
            if token == "&":
                return match.group(0)
            if token.startswith("<"):
                name = token[1:-1]
                return (match.groupdict().get(name) or "") if name in match.re.groupindex else m.group(0)
            number = int(token)
            if 1 <= number <= match.re.groups:
                return match.group(number) or ""
            if len(token) == 2 and 1 <= int(token[0]) <= match.re.groups:
                return (match.group(int(token[0])) or "") + token[1]
            return m.group(0)

        return _REPLACEMENT.sub(one, template)

    return expand


def _matches(ctx: Context, r: Value, args: list[Value], pos: Position) -> Value:
    if not isinstance(r, RegexValue):
        raise EvaluationError(f"matches() is a method of a regular expression, not a {type_name(r)}", pos)
    subject = args[0]
    if subject is None:
        return False
    text = to_text(subject)
    return timed(ctx, pos, lambda t: r.compiled.search(text, timeout=t)) is not None


STRING_METHODS: Table = {
    "contains": eager(1, 1, _contains),
    "containsAll": eager(1, None, _contains_all),
    "containsAny": eager(1, None, _contains_any),
    "startsWith": eager(1, 1, _starts_with),
    "endsWith": eager(1, 1, _ends_with),
    "lower": eager(0, 0, _lower),
    "title": eager(0, 0, _title),
    "trim": eager(0, 0, _trim),
    "replace": eager(2, 2, _replace),
    "repeat": eager(1, 1, _repeat),
    "reverse": eager(0, 0, _reverse),
    "slice": eager(1, 2, _slice),
    "split": eager(1, 2, _split),
}
REGEX_METHODS: Table = {"matches": eager(1, 1, _matches)}
