"""Typed constants of a query: literals, dates, durations, relative dates, the clock.

Dates are microseconds since the epoch, UTC (as `props.d` and `notes.mtime_ns / 1000`). A
date without a time is its UTC midnight; `today` is the clock's calendar date (in the
clock's time zone) at UTC midnight, so `due = date(today)` matches `due: 2024-05-01` on
that day wherever the server runs. Durations keep months apart from fixed time, so
`date(today) - dur(1 month)` is the same day a calendar month earlier.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from vault_agent.property_values import iso_micros, micros

Clock = Callable[[], dt.datetime]  # an aware "now"; tests inject a fixed one


def system_clock() -> dt.datetime:
    """Now, in the server's local time zone (the production clock)."""
    return dt.datetime.now().astimezone()


LitKind = Literal["string", "number", "boolean", "date", "null", "link", "duration"]
US_PER_DAY = 86_400_000_000


@dataclass(frozen=True)
class Duration:
    months: int = 0  # years and months: calendar arithmetic
    micros: int = 0  # weeks, days, hours, minutes, seconds

    def __neg__(self) -> Duration:
        return Duration(-self.months, -self.micros)

    def __add__(self, other: Duration) -> Duration:
        return Duration(self.months + other.months, self.micros + other.micros)

    def approx_micros(self) -> int:
        """A comparable length (a month as 30 days, a year as 365), for ordering durations."""
        years, months = divmod(self.months, 12)
        return self.micros + (years * 365 + months * 30) * US_PER_DAY

    def iso(self) -> str:
        """ISO 8601 duration (`P1M2DT3H`), for answers."""
        sign = "-" if self.approx_micros() < 0 else ""
        months, rest = abs(self.months), abs(self.micros)
        years, months = divmod(months, 12)
        days, rest = divmod(rest, US_PER_DAY)
        hours, rest = divmod(rest, 3_600_000_000)
        minutes, rest = divmod(rest, 60_000_000)
        seconds = rest / 1_000_000
        date = "".join(f"{v}{u}" for v, u in ((years, "Y"), (months, "M"), (days, "D")) if v)
        secs = f"{seconds:g}S" if seconds else ""
        time = "".join(f"{v}{u}" for v, u in ((hours, "H"), (minutes, "M")) if v) + secs
        return sign + "P" + (date or ("" if time else "0D")) + (("T" + time) if time else "")


@dataclass(frozen=True)
class Lit:
    """A typed constant. `date`, `number`, `boolean`: with `text` when given as text
    (equality also matches a property holding that text). `link`: the target as written in `[[…]]`."""

    kind: LitKind
    value: str | float | bool | int | Duration | None
    text: str | None = None

    def describe(self) -> str:
        return {"number": "a number", "string": "text", "boolean": "a boolean", "date": "a date",
                "null": "null", "link": "a link", "duration": "a duration"}[self.kind]  # fmt: skip


def add_months(us: int, months: int) -> int:
    """`us` moved by calendar months (the day clipped to the month's length), time kept."""
    if not months:
        return us
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=us)
    total = moment.year * 12 + (moment.month - 1) + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return micros(moment.replace(year=year, month=month + 1, day=day))


def shift(us: int, duration: Duration, sign: int = 1) -> int:
    """A date plus (sign 1) or minus (sign -1) a duration."""
    return add_months(us, sign * duration.months) + sign * duration.micros


_UNITS: dict[str, tuple[int, int]] = {}  # name → (months, µs)
for _names, _months, _us in (
    (("year", "years", "yr", "yrs", "y"), 12, 0),
    (("month", "months", "mo", "mos"), 1, 0),
    (("week", "weeks", "wk", "wks", "w"), 0, 7 * US_PER_DAY),
    (("day", "days", "d"), 0, US_PER_DAY),
    (("hour", "hours", "hr", "hrs", "h"), 0, 3_600_000_000),
    (("minute", "minutes", "min", "mins", "m"), 0, 60_000_000),
    (("second", "seconds", "sec", "secs", "s"), 0, 1_000_000),
):
    for _name in _names:
        _UNITS[_name] = (_months, _us)
_DUR_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*,?", re.I)


def parse_duration(text: str) -> Duration | None:
    """Dataview's `dur(...)` text: `7 days`, `1 s, 2 m, 3 h`, `1second 2min 3h`; else None."""
    pos, months, us = 0, 0, 0
    text = text.strip()
    if not text:
        return None
    while pos < len(text):
        m = _DUR_PART.match(text, pos)
        if m is None or m.group(2).lower() not in _UNITS:
            return None
        unit_months, unit_us = _UNITS[m.group(2).lower()]
        amount = float(m.group(1))
        if unit_months:
            if amount != int(amount):
                return None  # a fraction of a month has no calendar meaning
            months += int(amount) * unit_months
        else:
            us += round(amount * unit_us)
        pos = m.end()
    return Duration(months, us)


def _day(clock: Clock) -> dt.date:
    return clock().date()


def _now_us(clock: Clock) -> int:
    """The clock's instant as µs UTC."""
    return micros(clock().astimezone(dt.UTC))


def date_shorthand(name: str, clock: Clock) -> int | None:
    """Dataview's `date(today)`, `date(now)`, `date(sow)` … as µs UTC; None if unknown."""
    key = name.strip().lower()
    if key == "now":
        return _now_us(clock)
    today = _day(clock)
    if key == "today":
        return micros(today)
    if key == "yesterday":
        return micros(today - dt.timedelta(days=1))
    if key == "tomorrow":
        return micros(today + dt.timedelta(days=1))
    week_start = today - dt.timedelta(days=today.weekday())  # Monday, as Luxon's ISO weeks
    month_start = today.replace(day=1)
    last_day = calendar.monthrange(today.year, today.month)[1]
    ends = US_PER_DAY - 1  # "end of": the last microsecond of the day
    table = {
        ("sow", "start-of-week"): micros(week_start),
        ("eow", "end-of-week"): micros(week_start + dt.timedelta(days=6)) + ends,
        ("som", "start-of-month"): micros(month_start),
        ("eom", "end-of-month"): micros(today.replace(day=last_day)) + ends,
        ("soy", "start-of-year"): micros(today.replace(month=1, day=1)),
        ("eoy", "end-of-year"): micros(today.replace(month=12, day=31)) + ends,
    }
    for names, value in table.items():
        if key in names:
            return value
    return None


_RELATIVE = re.compile(r"(\d{1,6})\s*(h|d|w|mo|y)", re.I)


def relative_or_iso(text: str, clock: Clock) -> int | None:
    """A filter's date: ISO date or datetime, `today`/`yesterday`/…, or relative to now
    (`12h`, `7d`, `2w`, `3mo`, `1y` ago); µs UTC, or None when it is none of those."""
    value = iso_micros(text)
    if value is not None:
        return value
    m = _RELATIVE.fullmatch(text.strip())
    if m is not None:
        amount, unit = int(m.group(1)), m.group(2).lower()
        now = _now_us(clock)
        if unit == "mo":
            return add_months(now, -amount)
        if unit == "y":
            return add_months(now, -12 * amount)
        per = {"h": 3_600_000_000, "d": US_PER_DAY, "w": 7 * US_PER_DAY}[unit]
        return now - amount * per
    return date_shorthand(text, clock)


_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def text_filter_literal(text: str) -> Lit:
    """A filter value sent as text: the number or true/false it spells, which also equals
    its text (MCP clients with strict schemas send every `value` as a string, since the
    published schema types it so: a note's `priority: 3` must still match "3");
    otherwise as `typed_literal`."""
    word = text.strip()
    if _NUMBER_TEXT.fullmatch(word):
        return Lit("number", float(word), text)
    if word.lower() in ("true", "false"):
        return Lit("boolean", word.lower() == "true", text)
    return typed_literal(text)


def typed_literal(value: object) -> Lit:
    """A filter value (JSON) as a typed constant: numbers, booleans, null; a string that is
    an ISO date is a date that also equals its text; any other string is text."""
    if value is None:
        return Lit("null", None)
    if isinstance(value, bool):
        return Lit("boolean", value)
    if isinstance(value, int | float):
        return Lit("number", float(value))
    text = str(value)
    when = iso_micros(text)
    if when is not None:
        return Lit("date", when, text)
    return Lit("string", text)
