"""`regex matches /pattern/flags`: a JavaScript-style regular expression, run by RE2.

The plugin runs JavaScript's backtracking engine (and refuses nested quantifiers to avoid
catastrophic backtracking). Here every pattern runs in RE2 through Arrow's compute kernels
(`pyarrow.compute.match_substring_regex`, already how the task columns are scanned): RE2
matches in time linear in the text, so no pattern can hang a query, and it bounds a
pattern's compiled size (RE2's default 8 MiB; `a{1000}{1000}` is refused). What RE2 does not
have is refused with INVALID_QUERY, never run differently: lookaround (`(?=`, `(?!`,
`(?<=`, `(?<!`), backreferences (`\\1`, `\\k<name>`) and the `y`/`v` flags. `\\uXXXX` and
`\\u{…}` become RE2's `\\x{…}`; the `i`, `m`, `s` flags become inline `(?ims)`; `g`, `u`,
`d` change nothing for a yes/no match. Nested quantifiers (`(a+)+`), which the plugin
refuses, are accepted: they are harmless in RE2.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.errors import InvalidQuery
from vault_agent.query.tasks.lang_ast import Regex

MAX_PATTERN_CHARS = 1000
_SLASHED = re.compile(r"^/(.+)/([^/]*)$", re.S)  # the plugin's RegexMatcher.validateAndConstruct
_INLINE_FLAGS = {"i": "i", "m": "m", "s": "s"}
_NEUTRAL_FLAGS = set("gud")
_UNICODE_ESCAPE = re.compile(r"u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}")


def _translate(source: str) -> str:
    """JavaScript pattern syntax to RE2's, or ValueError naming what RE2 lacks."""
    out: list[str] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char != "\\":
            if source.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
                raise ValueError("lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`)")
            out.append(char)
            i += 1
            continue
        nxt = source[i + 1 : i + 2]
        if nxt.isdigit() and nxt != "0" or source.startswith("\\k<", i):
            raise ValueError("a backreference (`\\1`, `\\k<name>`)")
        if nxt == "u" and (m := _UNICODE_ESCAPE.match(source, i + 1)):
            out.append("\\x{" + (m.group(1) or m.group(2)) + "}")
            i = m.end()
            continue
        if nxt == "0":
            out.append("\\x00")
        else:
            out.append(source[i : i + 2])
        i += 2
    return "".join(out)


def compile_regex(text: str, where: str) -> Regex:
    """The `/pattern/flags` text of a filter as a checked RE2 search.

    Raises:
        InvalidQuery: not `/…/flags`, too long, a flag or construct RE2 does not run, or a
            pattern RE2 rejects.
    """
    m = _SLASHED.match(text)
    if m is None:
        raise InvalidQuery(
            f"tasks query: {where}: a regex search needs /pattern/ or /pattern/flags (see docs/tasks.md)"
        )
    source, flags = m.group(1), m.group(2)
    if len(source) > MAX_PATTERN_CHARS:
        raise InvalidQuery(
            f"tasks query: {where}: the regular expression is longer than {MAX_PATTERN_CHARS} characters"
        )
    unknown = sorted(set(flags) - set(_INLINE_FLAGS) - _NEUTRAL_FLAGS)
    if unknown:
        raise InvalidQuery(
            f"tasks query: {where}: regex flag(s) {', '.join(unknown)} are not supported (i, m, s, g, u, d are)"
        )
    try:
        pattern = _translate(source)
    except ValueError as err:
        raise InvalidQuery(
            f"tasks query: {where}: the regular expression uses {err}, which the linear-time engine "
            "(RE2) does not run; rewrite it without (see docs/tasks.md)"
        ) from None
    inline = "".join(sorted({_INLINE_FLAGS[f] for f in flags if f in _INLINE_FLAGS}))
    if inline:
        pattern = f"(?{inline}){pattern}"
    try:
        pc.match_substring_regex(pa.array([""]), pattern)
    except pa.ArrowInvalid:
        raise InvalidQuery(
            f"tasks query: {where}: the regular expression is not valid RE2 syntax or is too large "
            "(see docs/tasks.md)"
        ) from None
    return Regex(source=source, flags=flags, re2_pattern=pattern)
