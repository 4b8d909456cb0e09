"""How `vault_search` matches one line: the three modes and the snippet around a match.

`regex` (RE2, run by DuckDB: linear time, so no pattern can backtrack catastrophically; a
pattern RE2 rejects falls back to `plain` with warning REGEX_FALLBACK_PLAIN), `plain`
(case-insensitive literal text, as an RE2 `\\Q…\\E` pattern), `loose` (NFKC + casefold
tokens incl. CJK bigrams: a line matches when it holds at least 60 % of the query's
distinct tokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import duckdb

from vault_agent.contracts import WarningItem
from vault_agent.text import tokenize

Mode = Literal["plain", "regex", "loose"]
SNIPPET_CHARS = 240
LOOSE_MIN_OVERLAP = 0.6


@dataclass(frozen=True)
class Matcher:
    mode: Mode
    query: str
    pattern: str  # regex for RE2, the lowered query for plain
    tokens: frozenset[str]
    need: int

    def sql(self, col: str) -> tuple[str, list[Any]]:
        """SQL predicate over a line column and its parameters (regex/plain only)."""
        if self.mode == "regex":
            return f"regexp_matches({col}, ?)", [self.pattern]
        return f"regexp_matches({col}, ?, 'i')", [self.pattern]

    def loose_hit(self, line: str) -> bool:
        return len(self.tokens & set(tokenize(line))) >= self.need


def make_matcher(query: str, mode: Mode, warnings: list[WarningItem]) -> Matcher:
    """Validate the query for its mode; regex falls back to plain when RE2 rejects it."""
    if mode == "regex":
        try:
            duckdb.connect().execute("SELECT regexp_matches('', ?)", [query]).fetchall()
            return Matcher("regex", query, query, frozenset(), 0)
        except duckdb.Error:
            warnings.append(
                WarningItem(
                    code="REGEX_FALLBACK_PLAIN",
                    message="the pattern is not valid RE2 syntax (no lookaround or backreferences); "
                    "searched it as plain text",
                )
            )
            mode = "plain"
    if mode == "loose":
        toks = frozenset(tokenize(query))
        if toks:
            return Matcher("loose", query, "", toks, max(1, math.ceil(LOOSE_MIN_OVERLAP * len(toks))))
        mode = "plain"
    return Matcher("plain", query, literal(query), frozenset(), 0)


def literal(text: str) -> str:
    """An RE2 pattern matching `text` literally (\\Q…\\E quoting)."""
    return "\\Q" + text.replace("\\E", "\\E\\\\E\\Q") + "\\E"


def snippet(line: str, matcher: Matcher, matched: str | None = None) -> str:
    """At most SNIPPET_CHARS of the line, around the first match."""
    if len(line) <= SNIPPET_CHARS:
        return line
    pos = 0
    if matched:
        pos = max(0, line.find(matched))
    elif matcher.mode == "plain":
        pos = max(0, line.lower().find(matcher.query.lower()))
    elif matcher.mode == "loose":
        folded = line.casefold()
        hits = [folded.find(t) for t in matcher.tokens if t in folded]
        pos = min(hits) if hits else 0
    start = max(0, min(pos - SNIPPET_CHARS // 3, len(line) - SNIPPET_CHARS))
    out = line[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + out + ("…" if start + SNIPPET_CHARS < len(line) else "")
