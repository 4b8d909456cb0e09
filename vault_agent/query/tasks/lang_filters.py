"""One filter instruction as a node (the plugin's Field classes, in their order, and the
boolean combination last).

Read as the plugin reads them (src/Query/Filter/*Field.ts): case-insensitive keywords;
`<field> includes|does not include <text>` (case-insensitive substring) and `regex matches
|regex does not match /…/flags` for description, path, folder, root, filename, heading,
status.name, tag(s), id and recurrence; date fields with `before|after|on|in|on or before
|…` a date or range (dates.py), `has|no <field> date`, `<field> date is invalid`;
`priority is (above|below|not) <level>`; `status.type is (not) <TYPE>`; the yes/no
instructions (`done`, `is recurring`, `is blocked`, `has tags`, `exclude sub-items`…).
`filter by function` (JavaScript) is refused by name.
"""

from __future__ import annotations

import datetime as dt
import re

from vault_agent.errors import InvalidQuery
from vault_agent.query.tasks.lang_ast import (
    DATE_FIELDS,
    STATUS_TYPES,
    DateField,
    DateInvalid,
    DateIs,
    DatePresent,
    Done,
    Filter,
    Flag,
    PriorityIs,
    PriorityName,
    PriorityOp,
    StatusType,
    StatusTypeIs,
    Substring,
    TextField,
    TextMatch,
)
from vault_agent.query.tasks.lang_boolean import looks_boolean, parse_boolean
from vault_agent.query.tasks.lang_regex import compile_regex
from vault_agent.task_dates import parse_date_search

_FIXED: dict[str, Filter] = {
    "done": Done(True),
    "not done": Done(False),
    "is recurring": Flag("recurring", True),
    "is not recurring": Flag("recurring", False),
    "is blocked": Flag("blocked", True),
    "is not blocked": Flag("blocked", False),
    "is blocking": Flag("blocking", True),
    "is not blocking": Flag("blocking", False),
    "has tags": Flag("tags", True),
    "has tag": Flag("tags", True),
    "no tags": Flag("tags", False),
    "no tag": Flag("tags", False),
    "has id": Flag("id", True),
    "no id": Flag("id", False),
    "has depends on": Flag("depends_on", True),
    "no depends on": Flag("depends_on", False),
    "exclude sub-items": Flag("top_level", True),
}
for _field in DATE_FIELDS:
    _FIXED[f"has {_field} date"] = DatePresent(_field, True)
    _FIXED[f"no {_field} date"] = DatePresent(_field, False)
    if _field != "happens":
        _FIXED[f"{_field} date is invalid"] = DateInvalid(_field)

_TEXT_OPS = "includes|does not include|regex matches|regex does not match"
_TEXT_FIELDS: tuple[tuple[str, TextField, str], ...] = (
    (r"status\.name", "status.name", _TEXT_OPS),
    ("path", "path", _TEXT_OPS),
    ("folder", "folder", _TEXT_OPS),
    ("root", "root", _TEXT_OPS),
    ("description", "description", _TEXT_OPS),
    ("tag|tags", "tag", _TEXT_OPS + "|include|do not include"),
    ("heading", "heading", _TEXT_OPS),
    ("filename", "filename", _TEXT_OPS),
    ("recurrence", "recurrence", _TEXT_OPS),
    ("id", "id", _TEXT_OPS),
)
_TEXT_RES = tuple(
    (re.compile(rf"(?:{pat}) ({ops}) (.*)", re.I | re.S), name) for pat, name, ops in _TEXT_FIELDS
)
_DATE_INSTRUCTION: tuple[tuple[str, DateField], ...] = (
    ("happens", "happens"), ("cancelled", "cancelled"), ("created", "created"), ("starts", "start"),
    ("scheduled", "scheduled"), ("due", "due"), ("done", "done"),
)  # fmt: skip
_DATE_RES = tuple((re.compile(rf"{word} (.*)", re.I | re.S), field) for word, field in _DATE_INSTRUCTION)
_PRIORITY = re.compile(
    r"priority(\s+is)?(\s+(above|below|not))?(\s+(lowest|low|none|medium|high|highest))", re.I
)
_STATUS_TYPE = re.compile(r"status\.type", re.I)
_STATUS_TYPE_FULL = re.compile(r"status\.type (is|is not) ([^ ]+)", re.I)
_STATUS_TYPES: dict[str, StatusType] = {t: t for t in STATUS_TYPES}
_FUNCTION = re.compile(r"filter by function\b", re.I)


def _refuse(where: str, what: str) -> InvalidQuery:
    return InvalidQuery(f"tasks query: {where}: {what} (see docs/tasks.md)")


def _text(match: re.Match[str], field: TextField, where: str) -> TextMatch:
    op, value = match[1].lower(), match[2]
    negate = "not" in op
    if "regex" in op:
        return TextMatch(field, compile_regex(value, where), negate)
    return TextMatch(field, Substring(value), negate)


def _date(field: DateField, rest: str, where: str, today: dt.date) -> DateIs:
    if "<%" in rest or "{{" in rest:
        raise _refuse(where, f"the `{field}` date is unexpanded template text")
    search = parse_date_search(rest, today)
    if search is None:
        raise _refuse(where, f"the `{field}` date or range is not one vault-agent reads")
    return DateIs(field, search)


def _status_type(text: str, where: str) -> StatusTypeIs:
    m = _STATUS_TYPE_FULL.fullmatch(text)
    kind = _STATUS_TYPES.get(m[2].upper()) if m else None
    if m is None or kind is None:
        raise _refuse(
            where, "`status.type is|is not` takes TODO, DONE, IN_PROGRESS, ON_HOLD, CANCELLED or NON_TASK"
        )
    return StatusTypeIs(kind, m[1].lower() == "is not")


def _priority(m: re.Match[str]) -> PriorityIs:
    op: PriorityOp = (m[3] or "is").lower()  # type: ignore[assignment]  # the pattern's alternatives
    level: PriorityName = m[5].lower()  # type: ignore[assignment]
    return PriorityIs(op, level)


def _single(text: str, where: str, today: dt.date) -> Filter | None:
    """The instruction as one of the plugin's fields, or None when none reads it."""
    fixed = _FIXED.get(" ".join(text.lower().split()))
    if fixed is not None:
        return fixed
    if _STATUS_TYPE.match(text):
        return _status_type(text, where)
    if m := _PRIORITY.fullmatch(text):
        return _priority(m)
    for pattern, date_field in _DATE_RES:
        if m := pattern.fullmatch(text):
            return _date(date_field, m[1], where, today)
    for pattern, text_field in _TEXT_RES:
        if m := pattern.fullmatch(text):
            return _text(m, text_field, where)
    if _FUNCTION.match(text):
        raise _refuse(where, "`filter by function` runs JavaScript, which vault-agent never runs")
    return None


def parse_filter(text: str, where: str, today: dt.date, depth: int = 0) -> Filter:
    """One filter instruction (possibly a boolean combination) as a node.

    Raises:
        InvalidQuery: not an instruction vault-agent runs; the message names the line and
            the construct.
    """
    node = _single(text, where, today)
    if node is not None:
        return node
    if looks_boolean(text):

        def sub(inner: str, inner_depth: int) -> Filter:
            return parse_filter(inner, where, today, inner_depth)

        return parse_boolean(text, where, sub, depth)
    raise _refuse(where, "not an instruction of the Tasks query language that vault-agent runs")
