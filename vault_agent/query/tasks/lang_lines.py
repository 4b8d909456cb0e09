"""A Tasks query's text as statements: line continuations, placeholders, comments.

The plugin's Scanner (src/Query/Scanner.ts) joins a line ending in `\\` with the next (the
`\\` and the spaces around the join dropped, one space kept; `\\\\` at the end is a literal
`\\` and ends the line); each statement is trimmed and empty ones are dropped. Each statement
keeps the number of its first line (1-based) and of its last, so an error names the line
the user wrote.

Placeholders `{{query.file.path}}` (and `pathWithoutExtension`, `root`, `folder`,
`filename`, `filenameWithoutExtension`) expand to the block's own note; `{{! … }}` is a
Mustache comment and expands to nothing. Any other placeholder (JavaScript expressions,
`query.file.property(…)`, `query.allTasks`) is refused, never left as text to match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault_agent.errors import InvalidQuery

MAX_QUERY_LINES = 500  # a dashboard is tens of lines; past this it is no Tasks block

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_COMMENT = re.compile(r"^#")


@dataclass(frozen=True)
class Statement:
    """One instruction as the plugin reads it, with where it was written."""

    first_line: int
    last_line: int
    text: str  # continuations joined, placeholders expanded, trimmed

    def where(self) -> str:
        """`line 3` or `lines 3–5`, for messages."""
        if self.first_line == self.last_line:
            return f"line {self.first_line}"
        return f"lines {self.first_line}-{self.last_line}"

    def is_comment(self) -> bool:
        return _COMMENT.match(self.text) is not None


@dataclass(frozen=True)
class QueryFile:
    """The note holding a ```tasks block (the values of `{{query.file.…}}`)."""

    path: str  # vault-relative, with `.md`

    def values(self) -> dict[str, str]:
        """Each supported placeholder name and its value, as the plugin's TasksFile gives them."""
        folder, _, filename = self.path.rpartition("/")
        stem = filename[:-3] if filename.lower().endswith(".md") else filename
        path_stem = self.path[:-3] if self.path.lower().endswith(".md") else self.path
        root = self.path.split("/", 1)[0] + "/" if "/" in self.path else "/"
        return {
            "query.file.path": self.path,
            "query.file.pathWithoutExtension": path_stem,
            "query.file.root": root,
            "query.file.folder": folder + "/" if folder else "/",
            "query.file.filename": filename,
            "query.file.filenameWithoutExtension": stem,
        }


def _strip_continuation(line: str, continuing: bool) -> str:
    adjusted = line.lstrip(" \t") if continuing else line
    if adjusted.endswith("\\\\"):
        return adjusted[:-1]
    if line.endswith("\\"):
        return re.sub(r"[ \t]*\\$", "", adjusted)
    return adjusted


def continued_lines(text: str) -> list[Statement]:
    """The statements of a query text before placeholders (Scanner.continueLines).

    Raises:
        InvalidQuery: more than MAX_QUERY_LINES lines.
    """
    lines = text.split("\n")
    if len(lines) > MAX_QUERY_LINES:
        raise InvalidQuery(f"tasks query: {len(lines)} lines; at most {MAX_QUERY_LINES} are read")
    out: list[Statement] = []
    continuing = False
    parts: list[str] = []
    first = 1
    for number, raw in enumerate([*lines, ""], start=1):
        line = raw.rstrip("\r")
        adjusted = _strip_continuation(line, continuing)
        if not continuing:
            parts, first = [], number
        parts.append(adjusted)
        continuing = line.endswith("\\") and not line.endswith("\\\\")
        if not continuing:
            joined = " ".join(parts).strip()
            if joined:
                out.append(Statement(first, min(number, len(lines)), joined))
    return out


def expand_placeholders(statement: Statement, query_file: QueryFile | None) -> Statement:
    """The statement with its `{{…}}` placeholders replaced by the block note's values.

    Raises:
        InvalidQuery: a placeholder outside a block (no note to take values from), or one
            that is not among the supported `query.file.*` names.
    """
    if statement.is_comment() or "{{" not in statement.text:
        return statement
    values = (query_file or QueryFile("")).values()

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        if inner.startswith("!"):
            return ""  # a Mustache comment
        if inner not in values:
            raise InvalidQuery(
                f"tasks query: {statement.where()}: a placeholder vault-agent does not expand "
                "(supported: {{query.file.path}}, pathWithoutExtension, root, folder, filename, "
                "filenameWithoutExtension; see docs/tasks.md)"
            )
        if query_file is None:
            raise InvalidQuery(
                f"tasks query: {statement.where()}: a {{{{query.file.…}}}} placeholder needs the note of a "
                "```tasks block: run the block with `block` instead of `query` (see docs/tasks.md)"
            )
        return values[inner]

    expanded = _PLACEHOLDER.sub(replace, statement.text).strip()
    return Statement(statement.first_line, statement.last_line, expanded)


def statements(text: str, query_file: QueryFile | None = None) -> list[Statement]:
    """The query's statements, continuations joined and placeholders expanded; comments kept
    (the parser skips them) and empty statements dropped.

    Raises:
        InvalidQuery: too many lines, or a placeholder that cannot be expanded.
    """
    out = []
    for statement in continued_lines(text):
        expanded = expand_placeholders(statement, query_file)
        if expanded.text:
            out.append(expanded)
    return out
