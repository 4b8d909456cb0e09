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
from typing import Literal

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
_TASK_RE = re.compile(r"([\s>]*)([-*+]|[0-9]+[.)]) +\[(.)\](?=\s|\Z)")
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


def _emoji(kind: FieldKind, symbols: str, value: str = "") -> _Rule:
    """Tasks' `fieldRegex`: the symbol, an optional variant selector 16, spaces, the value."""
    source = f"(?:{symbols})\ufe0f?" + (f" *{value}" if value else "") + r"\Z"
    return _Rule(kind, "emoji", tuple(symbols.split("|")), re.compile(source))


def _dataview(kind: FieldKind, key: str, value: str) -> _Rule:
    """Tasks' `toInlineFieldRegex`: `[key:: value]` or `(key:: value)`, blanks around the
    pair, an optional trailing comma."""
    source = r"(?:(?=[^\]]+\])\[|(?=[^)]+\))\() *" + f"{key}:: *{value}" + r" *[)\]](?: *,)?\Z"
    return _Rule(kind, "dataview", (key + "::",), re.compile(source))


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
    _Rule("tag", "emoji", ("#",), re.compile(r"(?:^|\s)#[^ !@#$%^&*(),.?\":{}|<>]+\Z")),
    _emoji("id", "🆔", f"({_ID})"),
    _dataview("id", "id", f"({_ID})"),
    _emoji("depends_on", "⛔", f"({_IDS})"),
    _dataview("depends_on", "dependsOn", f"({_IDS})"),
)
# Every marker of the rules: a body holding none of them has no field (the common case).
_ANY_FIELD_RE = re.compile("[🔺⏫🔼🔽⏬✅❌📅📆🗓⏳⌛🛫➕🔁🏁🆔⛔#]|::")
MAX_PASSES = 21  # the plugin's failsafe: at most 20 passes after the first


@dataclass(frozen=True)
class TaskField:
    """One field found on the line: `line[start:end]` is all of it (emoji or brackets
    included), `line[value_start:value_end]` its value as written."""

    kind: FieldKind
    notation: Notation
    start: int
    end: int
    value_start: int
    value_end: int
    value: str


@dataclass(frozen=True)
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


def _field(rule: _Rule, line: str, start: int, m: re.Match[str]) -> TaskField:
    """The field a rule matched in line[start:…] (offsets into the line)."""
    a, b = start + m.start(), start + m.end()
    if rule.kind == "tag":
        a += len(m.group()) - len(m.group().lstrip(_JS_WS))
        return TaskField(rule.kind, rule.notation, a, b, a, b, line[a:b])
    if rule.kind == "priority" and rule.notation == "emoji":
        return TaskField(rule.kind, rule.notation, a, b, a, a + 1, line[a])
    raw = m.group(1)
    lead = len(raw) - len(raw.lstrip(_JS_WS))
    value = raw.strip(_JS_WS)  # the plugin trims a recurrence rule
    v = start + m.start(1) + lead
    return TaskField(rule.kind, rule.notation, a, b, v, v + len(value), value)


def _cut_fields(line: str, start: int, end: int) -> tuple[int, list[TaskField]]:
    """Fields cut from the end of line[start:end] as the plugin's deserialize loop does:
    (the end of what remains, the fields in the order they were cut)."""
    fields: list[TaskField] = []
    if not _ANY_FIELD_RE.search(line, start, end):
        return end, fields
    for _ in range(MAX_PASSES):
        matched = False
        for rule in _PASS:
            text = line[start:end]
            if not any(marker in text for marker in rule.markers):
                continue
            m = rule.regex.search(text)
            if m is None:
                continue
            fields.append(_field(rule, line, start, m))
            end = _trim_end(line, start, start + m.start())
            matched = True
        if not matched:
            break
    return end, fields


def parse_task_line(line: str) -> TaskLine | None:
    """The task on one line (without its line end), or None when it is no checkbox item."""
    m = _TASK_RE.match(line)
    if m is None:
        return None
    start = m.end()
    start += len(line[start:]) - len(line[start:].lstrip(_JS_WS))
    end = _trim_end(line, start, len(line))
    block = _BLOCK_LINK_RE.search(line, start, end)
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
        tags=tuple(line_tags(description)),
        values=values,
    )
