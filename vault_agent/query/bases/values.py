"""The values of Bases expressions and what every value can do: type, truth, text.

| type       | Python                              | notes                                          |
| ---------- | ----------------------------------- | ---------------------------------------------- |
| null       | `None`                              | a missing property reads as null               |
| boolean    | `bool`                              |                                                |
| number     | `float`                             | always a float (JavaScript's one number type)  |
| string     | `str` (`TagText` for a tag)         | a tag is a string that `contains` matches as a tag |
| list       | `list[Value]`                       | never mutated once made                        |
| object     | `dict[str, Value]`                  | never mutated once made                        |
| date       | `DateValue` (naive local wall time) | `has_time` False: a date without a time        |
| duration   | `DurationValue` (months, days, ms)  | calendar months and days, like moment.js       |
| link       | `LinkValue`                         | `path`: the vault file it resolves to, or None |
| file       | `FileValue` (a `FileInfo`)          |                                                |
| regex      | `RegexValue`                        |                                                |
| image, icon, html | `DisplayValue`               | display-only values: text a view renders       |

Truth (`isTruthy()`, `if`, `!`, `&&`, `||`, filters): null, false, 0, NaN, "" and an empty
list or object are false; everything else is true (a date, a file, a link, a regex, a
non-zero duration). Text (`toString()`, `+` with a string, `join`): null is "" (as
JavaScript's `join` writes it), numbers as JavaScript writes them (`3`, `0.1`, `1e+21`),
dates `YYYY-MM-DD` or `YYYY-MM-DD HH:mm:ss`, a duration its milliseconds, a link its target
as written, a file its path, lists joined with `, `.
"""

from __future__ import annotations

import datetime as dt
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import regex

MS_PER_DAY = 86_400_000.0
DAYS_PER_MONTH = 146_097 / 4_800  # moment.js: a month of the 400-year Gregorian cycle


class TagText(str):
    """A tag (`#a/b` as written): a string that list `contains` matches as a tag
    (case-insensitive, `#` optional, a parent matches its nested tags)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class DateValue:
    """A date (`has_time` False: midnight, shown without a time) or a date-time, naive local."""

    moment: dt.datetime
    has_time: bool


@dataclass(frozen=True, slots=True)
class DurationValue:
    """A duration as moment.js keeps one: calendar months, days, and milliseconds."""

    months: float = 0.0
    days: float = 0.0
    ms: float = 0.0

    def total_ms(self) -> float:
        return (self.months * DAYS_PER_MONTH + self.days) * MS_PER_DAY + self.ms


@dataclass(frozen=True, slots=True)
class LinkRef:
    """A link as a note holds it: the target as written (no `[[ ]]`, alias or heading) and
    the vault path it resolves to (None: no such file, or an external URL)."""

    target: str
    path: str | None


@dataclass(frozen=True, slots=True)
class FileInfo:
    """What an expression can know of one vault file (bases-run builds one per row).

    `properties` are the note's frontmatter as plain YAML values (str, int, float, bool,
    None, date, datetime, lists and mappings of them); wikilink strings in them are read as
    links. `tags` as `#tag` (body and frontmatter); `links` (body and frontmatter, as the docs
    say) and `embeds` with their resolved paths; `ctime`/`mtime` naive local date-times
    (None: unknown).
    """

    path: str
    size: int = 0
    ctime: dt.datetime | None = None
    mtime: dt.datetime | None = None
    tags: tuple[str, ...] = ()
    links: tuple[LinkRef, ...] = ()
    embeds: tuple[LinkRef, ...] = ()
    properties: Mapping[str, object] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def ext(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[1] if "." in name[1:] else ""

    @property
    def basename(self) -> str:
        name, ext = self.name, self.ext
        return name[: -len(ext) - 1] if ext else name

    @property
    def folder(self) -> str:
        """The parent folder's path; the vault root is `/`, as Obsidian names it."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else "/"


@dataclass(frozen=True, slots=True)
class FileValue:
    info: FileInfo


@dataclass(frozen=True, slots=True)
class LinkValue:
    """A link: `target` as written (a path, a name, or a URL), an optional display value,
    and the vault path it resolves to (None: unresolved, or external)."""

    target: str
    path: str | None
    display: Value = None


@dataclass(frozen=True, slots=True)
class RegexValue:
    source: str
    flags: str
    compiled: regex.Pattern[str] = field(compare=False, repr=False)


DisplayKind = Literal["image", "icon", "html"]


@dataclass(frozen=True, slots=True)
class DisplayValue:
    """A value only a view renders (`image()`, `icon()`, `html()`): its kind and its text."""

    kind: DisplayKind
    text: str


Value: TypeAlias = (
    None
    | bool
    | float
    | str
    | list["Value"]
    | dict[str, "Value"]
    | DateValue
    | DurationValue
    | LinkValue
    | FileValue
    | RegexValue
    | DisplayValue
)


def type_name(value: Value) -> str:
    """The name `isType()` tests: null, boolean, number, string, list, object, date,
    duration, link, file, regexp, image, icon or html."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, DateValue):
        return "date"
    if isinstance(value, DurationValue):
        return "duration"
    if isinstance(value, LinkValue):
        return "link"
    if isinstance(value, FileValue):
        return "file"
    if isinstance(value, RegexValue):
        return "regexp"
    return value.kind


def truthy(value: Value) -> bool:
    """JavaScript's truth, but an empty list or object is false (as Obsidian's values say)."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str | list | dict):
        return len(value) > 0
    if isinstance(value, DurationValue):
        return value.total_ms() != 0
    if isinstance(value, DisplayValue):
        return value.text != ""
    return True


def number_text(value: float) -> str:
    """A number as JavaScript's `String(n)` writes it (ECMAScript Number::toString)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # the shortest digits that read back the same float: Python's repr finds them
    digits, n = _shortest_digits(repr(abs(value)))
    k = len(digits)  # value = 0.digits × 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest_digits(text: str) -> tuple[str, int]:
    """(significant digits, n) with value = 0.digits × 10^n, from a positive float's repr."""
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    raw = whole + frac
    point = len(whole) + exponent
    stripped = raw.lstrip("0")
    point -= len(raw) - len(stripped)
    return stripped.rstrip("0") or "0", point


def date_text(value: DateValue) -> str:
    """`YYYY-MM-DD`, or `YYYY-MM-DD HH:mm:ss` for a date with a time."""
    m = value.moment
    day = f"{m.year:04d}-{m.month:02d}-{m.day:02d}"
    return f"{day} {m.hour:02d}:{m.minute:02d}:{m.second:02d}" if value.has_time else day


def to_text(value: Value) -> str:
    """The text of a value (`toString()`, string concatenation, `join`)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, list):
        return ", ".join(to_text(item) for item in value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {to_text(item)}" for key, item in value.items()) + "}"
    if isinstance(value, DateValue):
        return date_text(value)
    if isinstance(value, DurationValue):
        return number_text(value.total_ms())
    if isinstance(value, LinkValue):
        return value.target
    if isinstance(value, FileValue):
        return value.info.path
    if isinstance(value, RegexValue):
        return f"/{value.source}/{value.flags}"
    return value.text


def tag_name(text: str) -> str:
    """A tag's comparison key: without `#`, NFC, lower case."""
    return _fold(text[1:] if text.startswith("#") else text)


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else unicodedata.normalize("NFC", text).lower()


def tag_matches(tag: str, wanted: str) -> bool:
    """`#a/b` matches `a`, `#a` and `A/b` (nested tags, case-insensitive, `#` optional)."""
    have, want = tag_name(tag), tag_name(wanted)
    return bool(want) and (have == want or have.startswith(want + "/"))
