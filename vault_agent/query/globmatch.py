"""Case-insensitive globs over vault-relative paths (seed 003: `*.md`, `Projects/**`).

Rules: `**` matches any run of characters including `/`; `*` any run without `/`; `?`
one character other than `/`; `[...]` a class (`[!...]` negated); `{a,b}` alternatives.
A pattern without `/` matches the file name at any depth (`*.md`); a pattern with `/`
matches the whole vault-relative path (`Projects/**`, `**/daily/*.md`). Matching is
case-insensitive after NFC (SPEC.md: paths are NFC; seed 003: case-insensitive patterns).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vault_agent.errors import InvalidParameter
from vault_agent.text import nfc

MAX_GLOB_CHARS = 512


def _translate(pat: str) -> str:
    out: list[str] = []
    i = 0
    depth = 0
    while i < len(pat):
        ch = pat[i]
        if ch == "*":
            if pat.startswith("**", i):
                i += 2
                if i < len(pat) and pat[i] == "/":
                    out.append("(?:.*/)?")  # `**/` also matches zero folders
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pat.find("]", i + 2 if pat[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pat[i + 1 : end]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                body = body.replace("\\", "\\\\")
                # As fnmatch does: a literal '[' and the characters of future set operations
                # (&& ~~ ||) escaped, so a class never reads as a nested set (a FutureWarning).
                body = re.sub(r"([\[&~|])", r"\\\1", body)
                out.append(f"[{'^' if neg else ''}{body}]")
                i = end
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    if depth:
        raise InvalidParameter.about("glob", "has an unclosed '{'")
    return "".join(out)


def compile_glob(pattern: str | None) -> Callable[[str], bool] | None:
    """A predicate over vault-relative paths, or None when there is no pattern.

    Raises:
        InvalidParameter: the pattern is too long or malformed.
    """
    if pattern is None or not pattern.strip():
        return None
    if len(pattern) > MAX_GLOB_CHARS or "\x00" in pattern:
        raise InvalidParameter.about("glob", "is too long or contains a NUL character")
    pat = nfc(pattern.strip()).replace("\\", "/").lstrip("/")
    by_name = "/" not in pat.rstrip("/")
    pat = pat.rstrip("/") or "**"
    try:
        rx = re.compile(_translate(pat) + r"\Z", re.IGNORECASE | re.DOTALL)
    except re.error:
        raise InvalidParameter.about("glob", "is not a valid pattern") from None

    def match(rel: str) -> bool:
        target = rel.rsplit("/", 1)[-1] if by_name else rel
        return rx.match(target) is not None

    return match


def glob_sql_regex(pattern: str | None) -> tuple[str, bool] | None:
    """The same glob as an RE2-compatible regex for DuckDB: (regex, match basename only)."""
    if pattern is None or not pattern.strip():
        return None
    compile_glob(pattern)  # validates
    pat = nfc(pattern.strip()).replace("\\", "/").lstrip("/")
    by_name = "/" not in pat.rstrip("/")
    pat = pat.rstrip("/") or "**"
    return "^" + _translate(pat) + "$", by_name
