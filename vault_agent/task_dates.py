"""The date phrases of the Tasks plugin's queries, as a date or an inclusive date range.

Everything is computed from a `today` the caller passes (its clock's calendar date): nothing
here reads the wall clock. The plugin reads dates with chrono-node 2.3.9 and ranges with its
own rules (src/DateTime/DateParser.ts); this module reads the phrases its documentation
uses, with chrono's meaning for each:

- absolute: `2023-04-19` (also `2023/04/19`, `2023.04.19`), `14 October`, `14th of October
  2023`, `October 14`, `Oct 14th, 2023`, `May`, `May 2023` (a month alone is its 1st; without
  a year, the year whose date is closest to today, as chrono: on 2023-11-30 `January` is
  2024-01-01);
- relative days: `today`, `now`, `tomorrow`, `yesterday`; `N days|weeks|months|quarters|years
  ago`, `in N …`, `N … from now` / `N … later` (N in digits, `a`/`an`, or `one`…`twelve`;
  months clip to the month's last day, as moment);
- weekdays (`monday`, `mon`, …): alone, the closest one (at most 3 days away); `this monday`
  the Monday of the Sunday-to-Saturday week holding today, `last`/`past`/`next monday` that
  day 7 days earlier or later (chrono's dayjs weeks start on Sunday; `monday next week` too);
- ranges: `last|this|next week|month|quarter|year` (weeks are ISO weeks, Monday to Sunday,
  as the plugin defines them), numbered `2023`, `2023-Q2`, `2023-04`, `2023-W16` (ISO week),
  and two absolute dates `2023-01-01 2023-01-31` (in either order).

Differences from the plugin, on purpose: a phrase must be read whole (chrono picks a date out
of any text and ignores the rest; `due before 2023-01-01 oops` is refused here); an invalid
date (`2023-02-30`) is refused rather than dropped from a range; a range is two absolute
dates, never two relative ones; times of day and fuzzy numbers (`a few`, `several`) are not
read. Keywords are case-insensitive (the plugin's `This Week` falls to chrono's single date).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

Relation = Literal["on", "before", "after", "on or before", "on or after"]
RangeWhich = Literal["last", "this", "next"]
RangeUnit = Literal["week", "month", "quarter", "year"]

MAX_PHRASE_CHARS = 200  # a longer "date" is no date (and keeps the pair search small)


@dataclass(frozen=True)
class DateRange:
    """An inclusive span of days, `start <= end` (a single date is a range of one day)."""

    start: dt.date
    end: dt.date

    @staticmethod
    def between(a: dt.date, b: dt.date) -> DateRange:
        """The range from the earlier of two dates to the later."""
        return DateRange(min(a, b), max(a, b))

    def is_single_day(self) -> bool:
        return self.start == self.end


@dataclass(frozen=True)
class DateSearch:
    """A parsed `[keyword] <date or range>`: which days of the calendar it accepts."""

    relation: Relation
    range: DateRange

    def matches(self, day: dt.date) -> bool:
        """Whether a task's (valid) date satisfies the search, with the plugin's rules:
        `before` a range is before its start, `after` after its end, `on`/`in` inside it,
        `on or before` up to its end, `on or after` from its start."""
        if self.relation == "before":
            return day < self.range.start
        if self.relation == "after":
            return day > self.range.end
        if self.relation == "on or before":
            return day <= self.range.end
        if self.relation == "on or after":
            return day >= self.range.start
        return self.range.start <= day <= self.range.end


_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_UNIT_MONTHS = {"month": 1, "quarter": 3, "qtr": 3, "year": 12, "yr": 12}
_UNIT_DAYS = {"day": 1, "week": 7}
_WEEKDAYS = {
    "sunday": 6, "sun": 6, "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1,
    "wednesday": 2, "wed": 2, "thursday": 3, "thu": 3, "thur": 3, "thurs": 3,
    "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
}  # fmt: skip
# (Python's weekday numbers above: Monday 0 … Sunday 6)
_FULL_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS = {**_FULL_MONTHS, **{name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}}
_MONTHS["sept"] = 9

_NUM = r"(\d{1,6}|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT = r"(day|week|month|quarter|qtr|year|yr)s?"
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"

_CASUAL = {"today": 0, "now": 0, "tonight": 0, "tomorrow": 1, "tmr": 1, "yesterday": -1}
_IN_UNITS = re.compile(rf"(?:in|within)\s+{_NUM}\s+{_UNIT}")
_UNITS_AGO = re.compile(rf"{_NUM}\s+{_UNIT}\s+ago")
_UNITS_LATER = re.compile(rf"{_NUM}\s+{_UNIT}\s+(?:later|from\s+now|hence)")
_WEEKDAY = re.compile(
    r"(?:(this|last|past|next)\s+)?("
    + "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
    + r")\.?(?:\s+(this|last|past|next)\s+week)?"
)
_ISO = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_LITTLE_ENDIAN = re.compile(rf"{_DAY}(?:\s+of)?[\s-]+{_MONTH}{_YEAR}")
_MIDDLE_ENDIAN = re.compile(rf"{_MONTH}\s+{_DAY}{_YEAR}")
_MONTH_ONLY = re.compile(rf"(?:in\s+)?{_MONTH}{_YEAR}")

_RELATIVE_RANGE = re.compile(r"(last|this|next)\s+(week|month|quarter|year)")
_YEAR_RANGE = re.compile(r"(\d{4})")
_QUARTER_RANGE = re.compile(r"(\d{4})-q([1-4])")
_MONTH_RANGE = re.compile(r"(\d{4})-(\d{2})")
_WEEK_RANGE = re.compile(r"(\d{4})-w(\d{2})")

_KEYWORD = re.compile(r"(?:(on or before|in or before|on or after|in or after|before|after|on|in)(?:\s+|$))?")


def normalize(text: str) -> str:
    """Lower case, single spaces, no ends: the form every pattern here reads."""
    return " ".join(text.lower().split())


def add_months(day: dt.date, months: int) -> dt.date:
    """`day` moved by calendar months, clipped to the target month's last day.

    Raises:
        OverflowError: the result is outside years 1–9999.
    """
    total = day.year * 12 + (day.month - 1) + months
    year, month0 = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    return dt.date(year, month0 + 1, min(day.day, calendar.monthrange(year, month0 + 1)[1]))


def _number(word: str) -> int:
    return _NUMBER_WORDS[word] if word in _NUMBER_WORDS else int(word)


def _shift(today: dt.date, amount: int, unit: str) -> dt.date:
    """`today` moved by `amount` units (negative: back)."""
    if unit in _UNIT_DAYS:
        return today + dt.timedelta(days=amount * _UNIT_DAYS[unit])
    return add_months(today, amount * _UNIT_MONTHS[unit])


def _closest_year(today: dt.date, month: int, day: int) -> int | None:
    """chrono's year for a day and month without one: the year (of the three around today)
    whose date is closest to today; the current year on a tie."""
    best: tuple[int, int] | None = None
    for year in (today.year, today.year - 1, today.year + 1):
        try:
            distance = abs((dt.date(year, month, day) - today).days)
        except ValueError:
            continue
        if best is None or distance < best[0]:
            best = (distance, year)
    return None if best is None else best[1]


def _calendar_date(year: str | None, month: int, day: int, today: dt.date) -> dt.date | None:
    chosen = int(year) if year else _closest_year(today, month, day)
    if chosen is None:
        return None
    try:
        return dt.date(chosen, month, day)
    except ValueError:
        return None


def _absolute(norm: str, today: dt.date) -> dt.date | None:
    """A calendar date written out: ISO, or with a month's name."""
    if m := _ISO.fullmatch(norm):
        try:
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return None
    if m := _LITTLE_ENDIAN.fullmatch(norm):
        return _calendar_date(m[3], _MONTHS[m[2]], int(m[1]), today)
    if m := _MIDDLE_ENDIAN.fullmatch(norm):
        return _calendar_date(m[3], _MONTHS[m[1]], int(m[2]), today)
    if m := _MONTH_ONLY.fullmatch(norm):
        if m[2] is None and m[1] not in _FULL_MONTHS:
            return None  # chrono: `mar`, `jan` alone are words, not months
        return _calendar_date(m[2], _MONTHS[m[1]], 1, today)
    return None


def _weekday(modifier: str | None, weekday: int, today: dt.date) -> dt.date:
    """chrono 2.3.9's weekday (dayjs weeks start on Sunday)."""
    sunday_based = (weekday + 1) % 7  # Sunday 0 … Saturday 6, as dayjs
    today_sunday_based = (today.weekday() + 1) % 7
    this_week = today + dt.timedelta(days=sunday_based - today_sunday_based)
    if modifier == "this":
        return this_week
    if modifier == "next":
        return this_week + dt.timedelta(days=7)
    if modifier in ("last", "past"):
        return this_week - dt.timedelta(days=7)
    return min(  # the closest; a week has an odd number of days, so never a tie
        (this_week + dt.timedelta(days=k) for k in (-7, 0, 7)), key=lambda d: abs((d - today).days)
    )


def _relative(norm: str, today: dt.date) -> dt.date | None:
    """A date relative to today: casual words, N units ago / in N units, weekdays."""
    if norm in _CASUAL:
        return today + dt.timedelta(days=_CASUAL[norm])
    if m := _IN_UNITS.fullmatch(norm) or _UNITS_LATER.fullmatch(norm):
        return _shift(today, _number(m[1]), m[2])
    if m := _UNITS_AGO.fullmatch(norm):
        return _shift(today, -_number(m[1]), m[2])
    if m := _WEEKDAY.fullmatch(norm):
        if m[1] and m[3]:
            return None  # `next monday last week`: two modifiers, no meaning
        return _weekday(m[1] or m[3], _WEEKDAYS[m[2]], today)
    return None


def parse_date(text: str, today: dt.date) -> dt.date | None:
    """One date phrase (absolute or relative to `today`), or None when it is not one."""
    norm = normalize(text)
    if not norm or len(norm) > MAX_PHRASE_CHARS:
        return None
    try:
        return _absolute(norm, today) or _relative(norm, today)
    except (OverflowError, ValueError):  # `in 999999 years`: past the calendar
        return None


def relative_range(which: RangeWhich, unit: RangeUnit, today: dt.date) -> DateRange:
    """`last|this|next week|month|quarter|year` around today (ISO weeks, Monday to Sunday).

    Raises:
        OverflowError: the range leaves years 1–9999.
    """
    step = {"last": -1, "this": 0, "next": 1}[which]
    if unit == "week":
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=step)
        return DateRange(monday, monday + dt.timedelta(days=6))
    months = {"month": 1, "quarter": 3, "year": 12}[unit]
    first_month = (today.month - 1) // months * months  # 0-based month the period starts in
    start = add_months(dt.date(today.year, first_month + 1, 1), step * months)
    end = add_months(start, months) - dt.timedelta(days=1)
    return DateRange(start, end)


def _numbered_range(norm: str) -> DateRange | None:
    """`2023`, `2023-Q2`, `2023-04`, `2023-W16` (ISO week); None when not one or invalid."""
    try:
        if m := _YEAR_RANGE.fullmatch(norm):
            year = int(m[1])
            return DateRange(dt.date(year, 1, 1), dt.date(year, 12, 31))
        if m := _QUARTER_RANGE.fullmatch(norm):
            start = dt.date(int(m[1]), 3 * int(m[2]) - 2, 1)
            return DateRange(start, add_months(start, 3) - dt.timedelta(days=1))
        if m := _MONTH_RANGE.fullmatch(norm):
            start = dt.date(int(m[1]), int(m[2]), 1)
            return DateRange(start, add_months(start, 1) - dt.timedelta(days=1))
        if m := _WEEK_RANGE.fullmatch(norm):
            monday = dt.date.fromisocalendar(int(m[1]), int(m[2]), 1)
            return DateRange(monday, monday + dt.timedelta(days=6))
    except (OverflowError, ValueError):  # year 0, month 13, week 54
        return None
    return None


def _absolute_pair(norm: str, today: dt.date) -> DateRange | None:
    """Two absolute dates side by side (`2023-01-01 2023-01-31`, `17 August 2013 19 August 2013`)."""
    words = norm.split(" ")
    for cut in range(1, len(words)):
        first = _absolute(" ".join(words[:cut]), today)
        if first is None:
            continue
        second = _absolute(" ".join(words[cut:]), today)
        if second is not None:
            return DateRange.between(first, second)
    return None


def parse_date_range(text: str, today: dt.date) -> DateRange | None:
    """A date or a range (relative, numbered, two absolute dates), or None when neither."""
    norm = normalize(text)
    if not norm or len(norm) > MAX_PHRASE_CHARS:
        return None
    try:
        if m := _RELATIVE_RANGE.fullmatch(norm):
            which: RangeWhich = m[1]  # type: ignore[assignment]  # the pattern's alternatives
            unit: RangeUnit = m[2]  # type: ignore[assignment]
            return relative_range(which, unit, today)
        found = _numbered_range(norm) or _absolute_pair(norm, today)
    except (OverflowError, ValueError):
        return None
    if found is not None:
        return found
    day = parse_date(norm, today)
    return None if day is None else DateRange(day, day)


def parse_date_search(text: str, today: dt.date) -> DateSearch | None:
    """`[on|in|before|after|on or before|…] <date or range>` as the plugin reads what follows
    a date field's name (`due before next week`, `due 2023-01-01 2023-01-31`, `due in two
    weeks`); None when the date is not one. `in` and `on` mean the same; `in or before` is
    `on or before`."""
    norm = normalize(text)
    keyword = _KEYWORD.match(norm)
    word = keyword[1] if keyword and keyword[1] else None
    rest = norm[keyword.end() :] if keyword else norm
    found = parse_date_range(rest, today)
    if found is None and word == "in":  # `in two weeks`: the keyword belongs to the date
        found = parse_date_range(norm, today)
        word = None
    if found is None:
        return None
    relation: Relation = "on"
    if word in ("before", "after", "on or before", "on or after"):
        relation = word  # type: ignore[assignment]  # checked just above
    elif word in ("in or before", "in or after"):
        relation = "on or before" if word == "in or before" else "on or after"
    return DateSearch(relation, found)
