"""Values in answers, and the order of values in a sorted view.

JSON of a value (deterministic): null, booleans, numbers (a whole number without `.0`;
NaN and ±Infinity as the text JavaScript writes), text (cut at 1,000 characters), lists
and objects (cut at 100 items), dates ISO 8601 (`2025-05-01`, `2025-05-01T10:00:00`, local
time as Bases shows it), durations in milliseconds (what Bases' `toString()` gives), a
link as the vault path it resolves to (its target as written when it resolves to
nothing), a file as its path, a regular expression as `/source/flags`, an image, icon or
HTML value as its text.

Order (`sort`, `groupBy`, where the docs say only "A→Z, 0→1, old→new"; our choice):
empty values (null, "", [], {}) last whichever the direction; then numbers, dates, text
(case-insensitive first, then by code point), booleans (false first), durations, and
anything else by its text; descending reverses all but the empty ones.
"""

from __future__ import annotations

import math
from typing import Any

from vault_agent.query.bases.values import (
    DateValue,
    DisplayValue,
    DurationValue,
    FileValue,
    LinkValue,
    RegexValue,
    Value,
    number_text,
    to_text,
)

MAX_TEXT = 1_000
MAX_ITEMS = 100


def to_wire(value: Value, cut: list[bool]) -> Any:
    """A value as the answer shows it (module doc); `cut[0]` is set when something was cut."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return number_text(value)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, str | list | dict):
        return _container(value, cut)
    if isinstance(value, DateValue):
        m = value.moment
        return m.strftime("%Y-%m-%dT%H:%M:%S") if value.has_time else m.date().isoformat()
    if isinstance(value, DurationValue):
        return to_wire(value.total_ms(), cut)
    if isinstance(value, LinkValue):
        return value.path if value.path is not None else value.target
    if isinstance(value, FileValue):
        return value.info.path
    if isinstance(value, RegexValue | DisplayValue):
        return to_text(value)
    return to_text(value)


def _container(value: str | list[Value] | dict[str, Value], cut: list[bool]) -> Any:
    """Text, a list or an object, cut at its bound."""
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            cut[0] = True
            return value[:MAX_TEXT]
        return str(value)
    if len(value) > MAX_ITEMS:
        cut[0] = True
    if isinstance(value, list):
        return [to_wire(item, cut) for item in value[:MAX_ITEMS]]
    return {key: to_wire(item, cut) for key, item in list(value.items())[:MAX_ITEMS]}


def is_empty(value: Value) -> bool:
    """Null, empty text, an empty list or object: what sorts last and `Empty` counts."""
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)


def order_key(value: Value) -> tuple[Any, ...]:
    """The key of a non-empty value in ascending order (module doc)."""
    if isinstance(value, bool):
        return (3, int(value))
    if isinstance(value, float):
        return (0, value) if not math.isnan(value) else (5, "nan")
    if isinstance(value, DateValue):
        return (1, value.moment)
    if isinstance(value, str):
        return (2, value.casefold(), value)
    if isinstance(value, DurationValue):
        return (4, value.total_ms())
    text = to_text(value)
    return (5, text.casefold(), text)
