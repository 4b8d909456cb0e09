"""Dates and durations: parsing, arithmetic and fields, as Obsidian's (moment.js) do them.

- `parse_date`: `YYYY-MM-DD`, `YYYY-MM-DD HH:mm[:ss[.SSS]]`, ISO 8601 with `T` and an
  optional zone (`Z`, `+02:00`; converted to this machine's local time). Anything else: None.
- `parse_duration`: `"1 week"`, `"7d"`, `"1M"`, `"2h 30m"`, `"-1 day"`, decimals
  (`"1.5h"`), and ISO 8601 (`"P1DT2H"`). Units: `y year years`, `M month months`,
  `w week weeks`, `d day days`, `h hour hours`, `m minute minutes`, `s second seconds`,
  `ms millisecond milliseconds`; a one-letter unit is case-sensitive (`M` months, `m`
  minutes), a word is not.
- Adding a duration adds calendar months first (the day clamped to the month's end, as
  moment does: Jan 31 + 1M = Feb 28/29), then days, then milliseconds; a date without a
  time stays one unless the duration has a time part (`date("2024-12-01") + "4h"`).
- `date - date` is a duration of milliseconds; its fields (`.days`, `.months`, `.years`…)
  are totals with fractions, moment's `as(unit)` (`(now() - birthday).years.floor()`).
- A naive date-time reads as UTC where a number of milliseconds since the epoch is asked
  for (`number(date)`), as the index stores dates.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re

from vault_agent.query.bases.values import DAYS_PER_MONTH, MS_PER_DAY, DateValue, DurationValue

_EPOCH = dt.datetime(1970, 1, 1)
_DATE_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?",
    re.ASCII,
)
_PART_RE = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*([A-Za-z]+)\s*,?", re.ASCII)
_ISO_DURATION_RE = re.compile(
    r"([+-])?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?",
    re.ASCII,
)
# unit → (months, days, milliseconds) per one unit
_UNITS: dict[str, tuple[float, float, float]] = {
    "y": (12, 0, 0), "year": (12, 0, 0), "years": (12, 0, 0),
    "M": (1, 0, 0), "month": (1, 0, 0), "months": (1, 0, 0),
    "w": (0, 7, 0), "week": (0, 7, 0), "weeks": (0, 7, 0),
    "d": (0, 1, 0), "day": (0, 1, 0), "days": (0, 1, 0),
    "h": (0, 0, 3_600_000), "hour": (0, 0, 3_600_000), "hours": (0, 0, 3_600_000),
    "m": (0, 0, 60_000), "minute": (0, 0, 60_000), "minutes": (0, 0, 60_000),
    "s": (0, 0, 1_000), "second": (0, 0, 1_000), "seconds": (0, 0, 1_000),
    "ms": (0, 0, 1), "millisecond": (0, 0, 1), "milliseconds": (0, 0, 1),
}  # fmt: skip
DATE_FIELDS = ("year", "month", "day", "hour", "minute", "second", "millisecond")
DURATION_FIELDS = ("years", "months", "weeks", "days", "hours", "minutes", "seconds", "milliseconds")
_MAX_ABS_DAYS = 3_000_000  # beyond ±8,000 years a date cannot be represented


def parse_date(text: str) -> DateValue | None:
    """A date or date-time from text (see the module doc), else None."""
    m = _DATE_RE.fullmatch(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, frac, zone = m.groups()
    try:
        micro = int((frac or "0").ljust(6, "0")[:6])
        moment = dt.datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0), micro
        )
        if zone:
            moment = _local(moment, zone)
    except (ValueError, OverflowError):
        return None
    return DateValue(moment, hour is not None)


def _local(moment: dt.datetime, zone: str) -> dt.datetime:
    if zone == "Z":
        offset = dt.timedelta(0)
    else:
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        offset = -offset if zone[0] == "-" else offset
    return moment.replace(tzinfo=dt.timezone(offset)).astimezone().replace(tzinfo=None)


def from_python(value: dt.date) -> DateValue:
    """A YAML date or datetime as a date value (an aware datetime converted to local time)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone().replace(tzinfo=None)
        return DateValue(value, True)
    return DateValue(dt.datetime(value.year, value.month, value.day), False)


def parse_duration(text: str) -> DurationValue | None:
    """A duration from text (see the module doc), else None."""
    text = text.strip()
    if not text:
        return None
    if text.lstrip("+-").startswith("P"):
        return _iso_duration(text)
    months = days = ms = 0.0
    pos = 0
    while pos < len(text):
        m = _PART_RE.match(text, pos)
        if m is None:
            return None
        unit = m.group(2)
        per = _UNITS.get(unit) if len(unit) <= 2 else _UNITS.get(unit.lower())
        if per is None:
            return None
        amount = float(m.group(1))
        months, days, ms = months + amount * per[0], days + amount * per[1], ms + amount * per[2]
        pos = m.end()
    return DurationValue(months, days, ms)


def _iso_duration(text: str) -> DurationValue | None:
    m = _ISO_DURATION_RE.fullmatch(text)
    if m is None or not any(m.groups()[1:]):
        return None
    sign = -1.0 if m.group(1) == "-" else 1.0
    y, mo, w, d, h, mi, s = (float(g) if g else 0.0 for g in m.groups()[1:])
    return DurationValue(
        sign * (y * 12 + mo), sign * (w * 7 + d), sign * (h * 3_600_000 + mi * 60_000 + s * 1_000)
    )


def add(date: DateValue, duration: DurationValue, sign: int = 1) -> DateValue:
    """`date + duration` (sign 1) or `date - duration` (sign -1).

    Raises:
        OverflowError: the result is outside the years 1–9999.
    """
    whole_months = math.trunc(duration.months)
    days = duration.days + (duration.months - whole_months) * DAYS_PER_MONTH
    whole_days = math.trunc(days)
    ms = duration.ms + (days - whole_days) * MS_PER_DAY
    if abs(whole_months) > _MAX_ABS_DAYS or abs(whole_days) > _MAX_ABS_DAYS or not math.isfinite(ms):
        raise OverflowError("duration too large")
    moment = _add_months(date.moment, sign * whole_months)
    moment = moment + dt.timedelta(days=sign * whole_days, milliseconds=sign * ms)
    return DateValue(moment, date.has_time or ms != 0)


def _add_months(moment: dt.datetime, months: int) -> dt.datetime:
    if months == 0:
        return moment
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def between(later: DateValue, earlier: DateValue) -> DurationValue:
    """`later - earlier`: the milliseconds between two dates."""
    delta = later.moment - earlier.moment
    return DurationValue(
        0.0, 0.0, delta.days * MS_PER_DAY + delta.seconds * 1000.0 + delta.microseconds / 1000.0
    )


def epoch_ms(date: DateValue) -> float:
    """Milliseconds since 1970-01-01 (the naive time read as UTC)."""
    delta = date.moment - _EPOCH
    return delta.days * MS_PER_DAY + delta.seconds * 1000.0 + delta.microseconds // 1000


def date_field(date: DateValue, name: str) -> float:
    """One of DATE_FIELDS (`month` 1–12, `millisecond` 0–999)."""
    m = date.moment
    values = (m.year, m.month, m.day, m.hour, m.minute, m.second, m.microsecond // 1000)
    return float(values[DATE_FIELDS.index(name)])


def duration_field(duration: DurationValue, name: str) -> float:
    """moment's `duration.as(unit)`: the whole duration in that unit, with a fraction."""
    if name in ("years", "months"):
        months = duration.months + (duration.days + duration.ms / MS_PER_DAY) / DAYS_PER_MONTH
        return months / 12 if name == "years" else months
    days = duration.days + round(duration.months * DAYS_PER_MONTH)
    per_day = {
        "weeks": 1 / 7,
        "days": 1.0,
        "hours": 24.0,
        "minutes": 1440.0,
        "seconds": 86_400.0,
        "milliseconds": MS_PER_DAY,
    }
    return days * per_day[name] + duration.ms * per_day[name] / MS_PER_DAY


def scale(duration: DurationValue, factor: float) -> DurationValue:
    """`duration * factor`: every part scaled."""
    return DurationValue(duration.months * factor, duration.days * factor, duration.ms * factor)


def combine(a: DurationValue, b: DurationValue, sign: int = 1) -> DurationValue:
    """`a + b` (sign 1) or `a - b` (sign -1), part by part."""
    return DurationValue(a.months + sign * b.months, a.days + sign * b.days, a.ms + sign * b.ms)


def start_of_day(moment: dt.datetime) -> DateValue:
    """The date of `moment`, without a time (`today()`, `date.date()`)."""
    return DateValue(dt.datetime(moment.year, moment.month, moment.day), False)
