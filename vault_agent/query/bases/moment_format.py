"""moment.js's `format()` tokens and `fromNow()` wording (English), for `date.format()` and
`date.relative()`.

Tokens: `YYYY YY Y Q M MM MMM MMMM Mo D DD Do DDD DDDD d do dd ddd dddd E e w ww W WW
gggg GGGG H HH h hh k kk m mm s ss S SS SSS A a Z ZZ X x`, `[literal text]`; any other
character is written as it is (moment does the same). Zones: a naive local time has no
offset, so `Z` writes `+00:00`, as for UTC.
"""

from __future__ import annotations

import datetime as dt
import re

from vault_agent.query.bases.values import DateValue

_TOKEN = re.compile(
    r"\[[^\]]*\]|YYYY|YY|Y|Q|MMMM|MMM|MM|Mo|M|DDDD|DDD|Do|DD|D|dddd|ddd|dd|do|d|E|e|WW|W|ww|w|GGGG|gggg"
    r"|HH|H|hh|h|kk|k|mm|m|ss|s|SSS|SS|S|A|a|ZZ|Z|X|x"
)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # fmt: skip
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_EPOCH = dt.datetime(1970, 1, 1)


def ordinal(n: int) -> str:
    """`1st`, `2nd`, `11th`, `23rd` (moment's `Do`)."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def _week_of_year(m: dt.datetime) -> int:
    """moment's locale week (en: weeks start on Sunday, week 1 holds January 1st)."""
    jan1 = dt.date(m.year, 1, 1)
    first_sunday_offset = (jan1.weekday() + 1) % 7  # days since the Sunday on or before Jan 1
    return (m.timetuple().tm_yday - 1 + first_sunday_offset) // 7 + 1


def _token(m: dt.datetime, tok: str) -> str:
    weekday = (m.weekday() + 1) % 7  # moment: Sunday is 0
    hour12 = m.hour % 12 or 12
    simple = {
        "YYYY": f"{m.year:04d}", "YY": f"{m.year % 100:02d}", "Y": str(m.year), "Q": str((m.month - 1) // 3 + 1),
        "MMMM": _MONTHS[m.month - 1], "MMM": _MONTHS[m.month - 1][:3], "MM": f"{m.month:02d}",
        "Mo": ordinal(m.month), "M": str(m.month), "DDDD": f"{m.timetuple().tm_yday:03d}",
        "DDD": str(m.timetuple().tm_yday), "Do": ordinal(m.day), "DD": f"{m.day:02d}", "D": str(m.day),
        "dddd": _DAYS[weekday], "ddd": _DAYS[weekday][:3], "dd": _DAYS[weekday][:2], "do": ordinal(weekday),
        "d": str(weekday), "e": str(weekday), "E": str(m.isoweekday()),
        "HH": f"{m.hour:02d}", "H": str(m.hour), "hh": f"{hour12:02d}", "h": str(hour12),
        "kk": f"{m.hour or 24:02d}", "k": str(m.hour or 24), "mm": f"{m.minute:02d}", "m": str(m.minute),
        "ss": f"{m.second:02d}", "s": str(m.second), "SSS": f"{m.microsecond // 1000:03d}",
        "SS": f"{m.microsecond // 10000:02d}", "S": str(m.microsecond // 100000),
        "A": "AM" if m.hour < 12 else "PM", "a": "am" if m.hour < 12 else "pm", "ZZ": "+0000", "Z": "+00:00",
    }  # fmt: skip
    if tok in simple:
        return simple[tok]
    if tok in ("W", "WW"):
        week = m.isocalendar()[1]
        return f"{week:02d}" if tok == "WW" else str(week)
    if tok in ("w", "ww"):
        week = _week_of_year(m)
        return f"{week:02d}" if tok == "ww" else str(week)
    if tok == "GGGG":
        return f"{m.isocalendar()[0]:04d}"
    if tok == "gggg":
        return f"{m.year:04d}"
    seconds = (m - _EPOCH).total_seconds()
    return str(int(seconds)) if tok == "X" else str(int(seconds * 1000))


def format_date(value: DateValue, pattern: str) -> str:
    """`date.format(pattern)` with moment.js tokens."""
    m = value.moment
    out: list[str] = []
    pos = 0
    for found in _TOKEN.finditer(pattern):
        out.append(pattern[pos : found.start()])
        tok = found.group()
        out.append(tok[1:-1] if tok.startswith("[") else _token(m, tok))
        pos = found.end()
    out.append(pattern[pos:])
    return "".join(out)


def relative(value: DateValue, now: dt.datetime) -> str:
    """moment's `fromNow()`: `a few seconds ago`, `in 3 days`, `2 months ago`, …"""
    seconds = (value.moment - now).total_seconds()
    text = _humanize(abs(seconds))
    return f"in {text}" if seconds > 0 else f"{text} ago"


def _humanize(seconds: float) -> str:
    """moment's thresholds (s 45, m 45, h 22, d 26, M 11) and its rounding."""
    minutes, hours, days = round(seconds / 60), round(seconds / 3600), round(seconds / 86400)
    months, years = round(seconds / 86400 / 30.436875), round(seconds / 86400 / 365.25)
    if round(seconds) < 45:
        return "a few seconds"
    if minutes <= 1:
        return "a minute"
    if minutes < 45:
        return f"{minutes} minutes"
    if hours <= 1:
        return "an hour"
    if hours < 22:
        return f"{hours} hours"
    if days <= 1:
        return "a day"
    if days < 26:
        return f"{days} days"
    if months <= 1:
        return "a month"
    if months < 11:
        return f"{months} months"
    if years <= 1:
        return "a year"
    return f"{years} years"
