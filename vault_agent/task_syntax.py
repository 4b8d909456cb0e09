"""One checkbox list line read as the Tasks plugin reads it, with the exact span of every part.

Pure rules (no I/O), shared by the indexer (the `tasks` table), the query layer and the task
writer (`vault_update_task` changes one field and keeps every other byte, so every part of a
line is located by its character span, `line[start:end]`).

**The line** (Tasks' `TaskRegularExpressions.taskRegex`): indentation (blanks and `>` of
blockquotes and callouts), a list marker (`-`, `*`, `+`, `1.`, `1)`), one or more spaces, a
checkbox `[c]` holding exactly one character (the status symbol), then the body. Unlike the
plugin's regex, a blank or the line end must follow the checkbox (`- [x]done` is no task, as
Obsidian renders it). The body is trimmed; a trailing block link ` ^id` is taken off first.

**Fields** are read from the end of the body, as the plugin's serializers do: the body is
matched against every field pattern anchored at its end, a match is cut off, and this
repeats until nothing matches (a field followed by description text is description). Tags at
the end are cut off while looking and put back at the end of the description. Both notations
are read on every line (the plugin reads only the one its settings name):

- Tasks emoji: 🔺⏫🔼🔽⏬ priority, ✅ done, ❌ cancelled, 📅 (📆 🗓) due, ⏳ (⌛) scheduled,
  🛫 start, ➕ created, 🔁 recurrence, 🏁 on completion, 🆔 id, ⛔ depends on; each emoji
  optionally followed by the variant selector U+FE0F, then spaces, then the value;
- Dataview inline fields, `[key:: value]` or `(key:: value)`: `priority` (highest, high,
  medium, low, lowest), `completion`, `cancelled`, `due`, `scheduled`, `start`, `created`,
  `repeat`, `onCompletion`, `id`, `dependsOn`.

A date value is `YYYY-MM-DD` (the plugin's pattern); one that is no calendar date
(`2023-12-32`) is kept as written and marked invalid, never dropped. When a field occurs
twice, the leftmost occurrence wins (it is cut off last, as in the plugin).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from vault_agent.note_syntax import line_tags

FieldKind = Literal[
    "priority", "done", "cancelled", "due", "scheduled", "start", "created",
    "recurrence", "on_completion", "id", "depends_on", "tag",
]  # fmt: skip
Notation = Literal["emoji", "dataview"]
DATE_FIELDS: tuple[str, ...] = ("due", "scheduled", "start", "created", "done", "cancelled")
# Priority as the plugin orders it: 0 highest … 5 lowest, 3 none (no priority given).
PRIORITY_NAMES: tuple[str, ...] = ("highest", "high", "medium", "none", "low", "lowest")
PRIORITY_NONE = 3

# Whitespace as JavaScript's trim() sees it (the plugin trims with it).
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TASK_RE = re.compile(r"([\s>]*)([-*+]|[0-9]+[.)]) +\[(.)\](?=\s|\Z)\s*")
_BLOCK_LINK_RE = re.compile(r" \^[a-zA-Z0-9-]+\Z")
_DATE = r"([0-9]{4}-[0-9]{2}-[0-9]{2})"
_ID = r"[a-zA-Z0-9_-]+"
_IDS = rf"{_ID}(?: *, *{_ID} *)*"
_RECURRENCE = r"([a-zA-Z0-9, !]+)"
_EMOJI_PRIORITY = {"🔺": 0, "⏫": 1, "🔼": 2, "🔽": 4, "⏬": 5}
_DV_PRIORITY = {"highest": 0, "high": 1, "medium": 2, "low": 4, "lowest": 5}


@dataclass(frozen=True)
class _Rule:
    kind: FieldKind
    notation: Notation
    markers: tuple[str, ...]  # a match holds one of these (a cheap test before the regex)
    regex: re.Pattern[str]
    ends: frozenset[str]  # the characters a match can end with (a cheaper test)


_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ENDS: dict[str, frozenset[str]] = {
    _DATE: _DIGITS,
    "": frozenset("🔺⏫🔼🔽⏬\ufe0f"),
    "([a-zA-Z]+)": _LETTERS,
    "([a-zA-Z0-9, !]+)": _LETTERS | _DIGITS | frozenset(", !"),
    "([a-zA-Z0-9_-]+)": _LETTERS | _DIGITS | frozenset("_-"),
    "([a-zA-Z0-9_-]+(?: *, *[a-zA-Z0-9_-]+ *)*)": _LETTERS | _DIGITS | frozenset("_- "),
}


def _emoji(kind: FieldKind, symbols: str, value: str = "") -> _Rule:
    """Tasks' `fieldRegex`: the symbol, an optional variant selector 16, spaces, the value."""
    source = f"(?:{symbols})\ufe0f?" + (f" *{value}" if value else "") + r"\Z"
    return _Rule(kind, "emoji", tuple(symbols.split("|")), re.compile(source), _ENDS[value])


def _dataview(kind: FieldKind, key: str, value: str) -> _Rule:
    """Tasks' `toInlineFieldRegex`: `[key:: value]` or `(key:: value)`, blanks around the
    pair, an optional trailing comma."""
    source = r"(?:(?=[^\]]+\])\[|(?=[^)]+\))\() *" + f"{key}:: *{value}" + r" *[)\]](?: *,)?\Z"
    return _Rule(kind, "dataview", (key + "::",), re.compile(source), frozenset(")],"))


# One pass of DefaultTaskSerializer.deserialize, in its order (each emoji rule, then the
# Dataview rule of the same field).
_PASS: tuple[_Rule, ...] = (
    _emoji("priority", "🔺|⏫|🔼|🔽|⏬"),
    _dataview("priority", "priority", "(highest|high|medium|low|lowest)"),
    _emoji("done", "✅", _DATE),
    _dataview("done", "completion", _DATE),
    _emoji("cancelled", "❌", _DATE),
    _dataview("cancelled", "cancelled", _DATE),
    _emoji("due", "📅|📆|🗓", _DATE),
    _dataview("due", "due", _DATE),
    _emoji("scheduled", "⏳|⌛", _DATE),
    _dataview("scheduled", "scheduled", _DATE),
    _emoji("start", "🛫", _DATE),
    _dataview("start", "start", _DATE),
    _emoji("created", "➕", _DATE),
    _dataview("created", "created", _DATE),
    _emoji("recurrence", "🔁", _RECURRENCE),
    _dataview("recurrence", "repeat", _RECURRENCE),
    _emoji("on_completion", "🏁", "([a-zA-Z]+)"),
    _dataview("on_completion", "onCompletion", "([a-zA-Z]+)"),
    _Rule("tag", "emoji", ("#",), re.compile(r"(?:^|\s)#[^ !@#$%^&*(),.?\":{}|<>]+\Z"), frozenset()),
    _emoji("id", "🆔", f"({_ID})"),
    _dataview("id", "id", f"({_ID})"),
    _emoji("depends_on", "⛔", f"({_IDS})"),
    _dataview("depends_on", "dependsOn", f"({_IDS})"),
)
# The emoji and `#` markers of the rules: a pass tries only the rules whose marker the body
# holds, and the Dataview rules only when it holds `::` (the common body holds neither).
_MARKER_RE = re.compile("[🔺⏫🔼🔽⏬✅❌📅📆🗓⏳⌛🛫➕🔁🏁🆔⛔#]")
_RULES_OF: dict[str, tuple[int, ...]] = {}
for _k, _rule in enumerate(_PASS):
    for _marker in _rule.markers if _rule.notation == "emoji" else ("::",):
        _RULES_OF[_marker] = (*_RULES_OF.get(_marker, ()), _k)
_TAG_STOPS = frozenset(' !@#$%^&*(),.?":{}|<>')
MAX_PASSES = 21  # the plugin's failsafe: at most 20 passes after the first


class TaskField(NamedTuple):
    """One field found on the line: `line[start:end]` is all of it (emoji or brackets
    included), `line[value_start:value_end]` its value as written."""

    kind: FieldKind
    notation: Notation
    start: int
    end: int
    value_start: int
    value_end: int
    value: str


@dataclass(slots=True)  # not frozen: a frozen dataclass costs a setattr call per field, per task
class TaskLine:
    """A checkbox list line. Spans are character offsets into the line (end exclusive)."""

    indent: str  # blanks and `>` before the marker
    marker: str  # `-`, `*`, `+`, `1.`, `1)`
    status: str  # the one character between the brackets
    status_at: int  # its offset (the writer replaces line[status_at])
    body_start: int  # after the checkbox and its blanks
    body_end: int  # before the block link and trailing blanks
    text_end: int  # end of the description part that stays in place (fields and tags follow)
    block_link: str  # ` ^id` or ''
    description: str  # as the plugin shows it: the text before the fields, trailing tags put back
    fields: tuple[TaskField, ...]  # every field cut off, right to left (tags included)
    tags: tuple[str, ...]  # inline tags of the description (the project's tag rule)
    values: dict[str, str] = field(default_factory=dict)  # kind → value of the field in force

    def date(self, kind: str) -> str | None:
        """The text of a date field (`due` …) as written, or None."""
        return self.values.get(kind)

    def invalid_dates(self) -> tuple[str, ...]:
        """The date fields whose text is no calendar date (kept, marked)."""
        return tuple(k for k in DATE_FIELDS if k in self.values and not is_valid_date(self.values[k]))

    @property
    def priority(self) -> int:
        """0 highest … 5 lowest, 3 when none is given (PRIORITY_NAMES)."""
        text = self.values.get("priority")
        if text is None:
            return PRIORITY_NONE
        return _EMOJI_PRIORITY.get(text[:1], _DV_PRIORITY.get(text, PRIORITY_NONE))

    @property
    def depends_on(self) -> tuple[str, ...]:
        text = self.values.get("depends_on")
        return tuple(i for i in text.replace(" ", "").split(",") if i) if text else ()

    @property
    def notation(self) -> Notation | Literal["mixed"] | None:
        """Which notation the line's fields use (tags aside): None without fields."""
        used = {f.notation for f in self.fields if f.kind != "tag"}
        return None if not used else "mixed" if len(used) > 1 else next(iter(used))


def is_valid_date(text: str) -> bool:
    """Whether `YYYY-MM-DD` text is a calendar date (`2023-12-32` is not)."""
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _trim_end(line: str, start: int, end: int) -> int:
    """`end` moved left past JavaScript whitespace, not before `start`."""
    return start + len(line[start:end].rstrip(_JS_WS))


def _field(rule: _Rule, line: str, offset: int, m: re.Match[str]) -> TaskField:
    """The field a rule matched (`m` over line[offset:…]; offsets into the line)."""
    a, b = offset + m.start(), offset + m.end()
    if rule.kind == "tag":
        a += len(m.group()) - len(m.group().lstrip(_JS_WS))
        return TaskField(rule.kind, rule.notation, a, b, a, b, line[a:b])
    if rule.kind == "priority" and rule.notation == "emoji":
        return TaskField(rule.kind, rule.notation, a, b, a, a + 1, line[a])
    raw = m.group(1)
    lead = len(raw) - len(raw.lstrip(_JS_WS))
    value = raw.strip(_JS_WS)  # the plugin trims a recurrence rule
    v = offset + m.start(1) + lead
    return TaskField(rule.kind, rule.notation, a, b, v, v + len(value), value)


def _match(rule: _Rule, line: str, start: int, end: int) -> tuple[int, re.Match[str]] | None:
    """The rule's match ending at `end` in line[start:end], as a search over that text finds
    it, and the offset its positions count from. A match can only begin at the last
    occurrence of its marker (emoji), at the last opening bracket (Dataview: no value holds
    one) or just before the last `#` (a tag holds none), so the search starts there."""
    if rule.kind == "tag":
        at = line.rfind("#", start, end)
        if at < 0:
            return None
        m = rule.regex.search(line[start:end], max(0, at - start - 1))  # a slice: `^` is its start
        return None if m is None else (start, m)
    if rule.notation == "dataview":
        at = max(line.rfind("[", start, end), line.rfind("(", start, end))
    else:
        at = max(line.rfind(marker, start, end) for marker in rule.markers)
    m = rule.regex.search(line, at, end) if at >= 0 else None  # endpos: `\Z` matches at `end`
    return None if m is None else (0, m)


def _cut_fields(line: str, start: int, end: int) -> tuple[int, list[TaskField]]:
    """Fields cut from the end of line[start:end] as the plugin's deserialize loop does:
    (the end of what remains, the fields in the order they were cut)."""
    fields: list[TaskField] = []
    markers = _MARKER_RE.findall(line, start, end)
    dataview = line.find("::", start, end) >= 0
    if not markers and not dataview:
        return end, fields  # the common case: nothing that could be a field
    found: set[int] = set(_RULES_OF["::"]) if dataview else set()
    for marker in markers:
        found.update(_RULES_OF[marker])
    rules = [_PASS[k] for k in sorted(found)]  # the pass's order
    for _ in range(MAX_PASSES):
        matched = False
        for rule in rules:
            if end <= start:
                break
            last = line[end - 1]
            # A field ends with one of its `ends`; a tag with anything but blanks and its stops.
            if last not in rule.ends and (rule.kind != "tag" or last in _TAG_STOPS or last.isspace()):
                continue
            hit = _match(rule, line, start, end)
            if hit is None:
                continue
            offset, m = hit
            fields.append(_field(rule, line, offset, m))
            end = start + len(line[start : offset + m.start()].rstrip(_JS_WS))
            matched = True
        if not matched:
            break
    return end, fields


def parse_task_line(line: str) -> TaskLine | None:
    """The task on one line (without its line end), or None when it is no checkbox item."""
    m = _TASK_RE.match(line)
    if m is None:
        return None
    start = m.end()  # the blanks after the checkbox are in the match
    end = max(start, len(line.rstrip(_JS_WS)))
    block = _BLOCK_LINK_RE.search(line, start, end) if line.find("^", start, end) >= 0 else None
    if block is not None:
        end = _trim_end(line, start, block.start())
    text_end, fields = _cut_fields(line, start, end)
    values: dict[str, str] = {}
    for f in fields:  # cut right to left: the leftmost occurrence is set last and wins
        if f.kind != "tag":
            values[f.kind] = f.value
    tags = [f.value for f in reversed(fields) if f.kind == "tag"]
    description = line[start:text_end]
    if tags:
        description += (" " if description else "") + " ".join(tags)
    return TaskLine(
        indent=m.group(1),
        marker=m.group(2),
        status=m.group(3),
        status_at=m.start(3),
        body_start=start,
        body_end=end,
        text_end=text_end,
        block_link=block.group() if block is not None else "",
        description=description,
        fields=tuple(fields),
        tags=tuple(line_tags(description)) if "#" in description else (),
        values=values,
    )
