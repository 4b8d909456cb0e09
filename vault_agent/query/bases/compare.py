"""Equality and order of values (`==`, `!=`, `<`…, `contains`, `unique`, `sort`).

Equality is by type and value, with the cross-type cases the docs name: a link equals a
file it resolves to (`author == this`), two links are equal when they resolve to the same
file (or, unresolved, have the same target), a date equals a string holding the same date
(`date > "2025-07-18"` compares dates), a duration equals its milliseconds. Otherwise
values of different types are never equal (`1 != "1"`): where the docs are silent we keep
types apart rather than guess JavaScript's loose coercions.

Order: numbers, strings (code points), booleans, dates (a string is read as a date), durations
(or milliseconds), and a number against a numeric string. Anything else, null included, is
unordered: every `<`, `<=`, `>`, `>=` on it is false.
"""

from __future__ import annotations

import functools
import math

from vault_agent.query.bases import dates
from vault_agent.query.bases.values import (
    DateValue,
    DisplayValue,
    DurationValue,
    FileValue,
    LinkValue,
    RegexValue,
    TagText,
    Value,
    tag_matches,
    to_text,
)


def equals(a: Value, b: Value) -> bool:
    """`a == b`."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) and isinstance(b, float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, LinkValue) or isinstance(b, LinkValue):
        return _link_equals(a, b)
    if isinstance(a, FileValue) and isinstance(b, FileValue):
        return a.info.path == b.info.path
    if isinstance(a, DateValue) or isinstance(b, DateValue):
        order = compare(a, b)
        return order == 0
    if isinstance(a, DurationValue) or isinstance(b, DurationValue):
        return compare(a, b) == 0
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equals(item, b[key]) for key, item in a.items())
    if isinstance(a, RegexValue) and isinstance(b, RegexValue):
        return a.source == b.source and a.flags == b.flags
    if isinstance(a, DisplayValue) and isinstance(b, DisplayValue):
        return a == b
    return False


def _link_equals(a: Value, b: Value) -> bool:
    link, other = (a, b) if isinstance(a, LinkValue) else (b, a)
    assert isinstance(link, LinkValue)
    if isinstance(other, FileValue):
        return link.path == other.info.path
    if isinstance(other, LinkValue):
        if link.path is not None and other.path is not None:
            return link.path == other.path
        return link.path is None and other.path is None and link.target == other.target
    if isinstance(other, str):
        return other in (link.target, link.path)
    return False


def contains(items: list[Value], wanted: Value) -> bool:
    """A list holds `wanted`: an equal element, or a tag matching it (`#a/b` holds `a`)."""
    if isinstance(wanted, str) and not isinstance(wanted, TagText):
        for item in items:
            if isinstance(item, TagText) and tag_matches(item, wanted):
                return True
    return any(equals(item, wanted) for item in items)


def compare(a: Value, b: Value) -> int | None:
    """-1, 0 or 1 when `a` and `b` are ordered, else None (every ordering comparison false)."""
    if a is None or b is None:
        return None
    if isinstance(a, bool) and isinstance(b, bool):
        return _sign(int(a) - int(b))
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, float) and isinstance(b, float):
        return None if math.isnan(a) or math.isnan(b) else _sign(a - b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    if isinstance(a, DateValue) or isinstance(b, DateValue):
        left, right = _as_date(a), _as_date(b)
        if left is None or right is None:
            return None
        return (left.moment > right.moment) - (left.moment < right.moment)
    if isinstance(a, DurationValue) or isinstance(b, DurationValue):
        x, y = _as_ms(a), _as_ms(b)
        return None if x is None or y is None else _sign(x - y)
    if isinstance(a, float) and isinstance(b, str) or isinstance(a, str) and isinstance(b, float):
        x, y = _as_number(a), _as_number(b)
        return None if x is None or y is None else _sign(x - y)
    return None


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _as_date(value: Value) -> DateValue | None:
    if isinstance(value, DateValue):
        return value
    return dates.parse_date(value) if isinstance(value, str) else None


def _as_ms(value: Value) -> float | None:
    if isinstance(value, DurationValue):
        return value.total_ms()
    return value if isinstance(value, float) and not math.isnan(value) else None


def _as_number(value: Value) -> float | None:
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return None if math.isnan(number) else number
    return None


def _rank(value: Value) -> int:
    if value is None:
        return 99
    if isinstance(value, bool):
        return 2
    if isinstance(value, float):
        return 0
    if isinstance(value, str):
        return 1
    if isinstance(value, DateValue):
        return 3
    if isinstance(value, DurationValue):
        return 4
    return 10


def _sort_order(a: Value, b: Value) -> int:
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return ra - rb
    order = compare(a, b)
    if order is None:
        if ra != 10:
            return 0
        left, right = to_text(a), to_text(b)
        return (left > right) - (left < right)
    return order


def sort_values(items: list[Value]) -> list[Value]:
    """`list.sort()`: numbers, then strings, booleans, dates, durations, the rest; null last."""
    return sorted(items, key=functools.cmp_to_key(_sort_order))
