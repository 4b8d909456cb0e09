"""Typed property values: what the indexer stores in `props` and the query layer compares.

Shared by the writer (`indexer/properties.py`) and the readers (`query/structured/`), so
that a date is the same number of microseconds on both sides and a property name is the
same canonical name (Dataview's: `Due Date` → `due-date`).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from typing import Any

from vault_agent.text import nfc

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_CANON_DROP = re.compile(r"[^\w\s-]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_ISO_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)


@functools.lru_cache(maxsize=4096)
def canonical_key(name: str) -> str:
    """Dataview's variable name of a property: casefolded, whitespace runs → `-`, other
    punctuation dropped (`Due Date!` → `due-date`); `.` separates nested keys. Cached: a
    vault repeats a few names in every note."""
    return ".".join(
        _SPACES.sub("-", _CANON_DROP.sub("", nfc(part)).strip()).casefold() for part in name.split(".")
    )


_EPOCH_DAY = dt.date(1970, 1, 1).toordinal()
_US_PER_DAY = 86_400_000_000


def micros(value: dt.date | dt.datetime) -> int:
    """µs since the epoch, UTC; a date is its midnight, a naive datetime is read as UTC."""
    days = (value.toordinal() - _EPOCH_DAY) * _US_PER_DAY
    if not isinstance(value, dt.datetime):
        return days
    us = days + ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    offset = value.utcoffset()
    return (
        us
        if offset is None
        else us - (offset.days * 86_400 + offset.seconds) * 1_000_000 - offset.microseconds
    )


def iso_micros(text: str) -> int | None:
    """µs of an ISO date or datetime string (`2024-05-01`, `2024-05-01T10:30`, with an
    optional zone), else None."""
    text = text.strip()
    if len(text) < 10 or not _ISO_DATE.fullmatch(text):
        return None
    try:
        if len(text) == 10:
            return micros(dt.date.fromisoformat(text))
        return micros(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def typed_value(value: Any) -> tuple[str, str | None, float | None, int | None, bool | None]:
    """(kind, s, n, d, b) of one scalar YAML value (lists and maps are the caller's)."""
    if value is None:
        return "null", None, None, None, None
    if isinstance(value, bool):
        return "boolean", "true" if value else "false", None, None, value
    if isinstance(value, int | float):
        number = float(value)
        return "number", str(value), (number if math.isfinite(number) else None), None, None
    if isinstance(value, dt.datetime):
        return "datetime", value.isoformat(), None, micros(value), None
    if isinstance(value, dt.date):
        return "date", value.isoformat(), None, micros(value), None
    text = nfc(value) if isinstance(value, str) else str(value)
    return "string", text, None, iso_micros(text), None


def iso_of_micros(value: int, date_only: bool = False) -> str:
    """µs since the epoch as ISO 8601 UTC (`2024-05-01`, or `2024-05-01T10:30:00Z`)."""
    moment = _EPOCH + dt.timedelta(microseconds=value)
    if date_only:
        return moment.date().isoformat()
    return moment.replace(tzinfo=None).isoformat() + "Z"
