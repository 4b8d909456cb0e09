"""A recurring task's rule text read as the Tasks plugin reads it (pure, no I/O).

The plugin reads a rule (`🔁 every week on Monday`, `[repeat:: every 2 months when done]`)
with rrule.js's English parser (`RRule.parseText`). This module mirrors that parser token
for token (`src/nlp/parsetext.ts`, `src/nlp/i18n.ts`: the same token patterns, longest
match, the same grammar, including what it passes over: a word it has no token for ends the
rule, as in the plugin) and yields python-dateutil `rrule` options, dateutil being the
library rrule.js is a port of (`task_recurrence` iterates them).

Refused, by name (`RecurrenceError`): what rrule.js cannot parse either (`every two weeks`,
`every blue moon`); `until …` (rrule.js reads the rest of the rule with JavaScript's
`Date.parse`, whose heuristics are the browser's: never guessed here); values no date can
take (hour 24, the 32nd, week 54, February the 30th), where rrule.js would search without end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from dateutil import rrule as du

Frequency = Literal[0, 1, 2, 3, 4, 5, 6]  # dateutil's YEARLY … SECONDLY
# rrule.js's English tokens, in its order (a tie in length goes to the earlier one).
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("SKIP", r"^[ \r\n\t]+|^\.$"),
        ("number", r"^[1-9][0-9]*"),
        ("numberAsText", r"^(one|two|three)"),
        ("every", r"^every"),
        ("day(s)", r"^days?"),
        ("weekday(s)", r"^weekdays?"),
        ("week(s)", r"^weeks?"),
        ("hour(s)", r"^hours?"),
        ("minute(s)", r"^minutes?"),
        ("month(s)", r"^months?"),
        ("year(s)", r"^years?"),
        ("on", r"^(on|in)"),
        ("at", r"^(at)"),
        ("the", r"^the"),
        ("first", r"^first"),
        ("second", r"^second"),
        ("third", r"^third"),
        ("nth", r"^([1-9][0-9]*)(\.|th|nd|rd|st)"),
        ("last", r"^last"),
        ("for", r"^for"),
        ("time(s)", r"^times?"),
        ("until", r"^(un)?til"),
        ("monday", r"^mo(n(day)?)?"),
        ("tuesday", r"^tu(e(s(day)?)?)?"),
        ("wednesday", r"^we(d(n(esday)?)?)?"),
        ("thursday", r"^th(u(r(sday)?)?)?"),
        ("friday", r"^fr(i(day)?)?"),
        ("saturday", r"^sa(t(urday)?)?"),
        ("sunday", r"^su(n(day)?)?"),
        ("january", r"^jan(uary)?"),
        ("february", r"^feb(ruary)?"),
        ("march", r"^mar(ch)?"),
        ("april", r"^apr(il)?"),
        ("may", r"^may"),
        ("june", r"^june?"),
        ("july", r"^july?"),
        ("august", r"^aug(ust)?"),
        ("september", r"^sep(t(ember)?)?"),
        ("october", r"^oct(ober)?"),
        ("november", r"^nov(ember)?"),
        ("december", r"^dec(ember)?"),
        ("comma", r"^(,\s*|(and|or)\s*)+"),
    )
)
_WEEKDAYS = {
    "monday": du.MO, "tuesday": du.TU, "wednesday": du.WE, "thursday": du.TH,
    "friday": du.FR, "saturday": du.SA, "sunday": du.SU,
}  # fmt: skip
_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_PERIODS: dict[str, Frequency] = {
    "week(s)": du.WEEKLY, "hour(s)": du.HOURLY, "minute(s)": du.MINUTELY,
    "month(s)": du.MONTHLY, "year(s)": du.YEARLY,
}  # fmt: skip
_MONTH_NUMBERS = {name: number for number, name in enumerate(_MONTHS, start=1)}
_WORKDAYS = [du.MO, du.TU, du.WE, du.TH, du.FR]
# The plugin's split of a rule: the rule, then an optional ` when done` (Recurrence.fromText).
_WHEN_DONE_RE = re.compile(r"^([a-zA-Z0-9, !]+?)( when done)?$", re.IGNORECASE)
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class RecurrenceError(ValueError):
    """A rule the plugin's parser cannot read, or that this module refuses (module doc)."""


@dataclass(frozen=True)
class Rule:
    """A parsed rule: dateutil `rrule` options without `dtstart`, and the plugin's extras."""

    freq: Frequency
    options: dict[str, Any] = field(default_factory=dict)
    when_done: bool = False

    @property
    def interval(self) -> int:
        return int(self.options.get("interval", 1))

    @property
    def month_check(self) -> bool:
        """The plugin's `every( N)? month` correction: its text names months and no `on …`
        (rrule.js's toText: MONTHLY without bymonthday/byweekday, and without bymonth
        unless the interval is written)."""
        o = self.options
        return (
            self.freq == du.MONTHLY
            and "bymonthday" not in o
            and "byweekday" not in o
            and ("bymonth" not in o or self.interval != 1)
        )

    @property
    def year_check(self) -> bool:
        """The plugin's `every( N)? year` correction (toText says `every [N] year(s)`)."""
        return self.freq == du.YEARLY and ("bymonth" not in self.options or self.interval != 1)


class _Tokens:
    """rrule.js's `Parser`: the longest matching token, blanks skipped."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.done = False
        self.symbol: str | None = None
        self.value: re.Match[str] | None = None

    def next(self) -> bool:
        self.symbol, self.value = None, None
        while True:
            if self.done:
                return False
            best: re.Match[str] | None = None
            best_name = ""
            for name, pattern in _TOKENS:
                m = pattern.match(self.text)
                if m is not None and (best is None or len(m.group()) > len(best.group())):
                    best, best_name = m, name
            if best is None:
                self.done = True
                return False
            self.text = self.text[len(best.group()) :]
            if self.text == "":
                self.done = True
            if best_name != "SKIP":
                self.symbol, self.value = best_name, best
                return True

    def is_done(self) -> bool:
        return self.done and self.symbol is None

    def accept(self, name: str) -> re.Match[str] | None:
        if self.symbol != name:
            return None
        value = self.value
        self.next()
        return value

    def expect(self, name: str) -> None:
        if self.accept(name) is None:
            raise RecurrenceError(f"expected {name}")


class _Parser:
    """rrule.js's `parseText` grammar (S, ON, AT, MDAYs, F), building dateutil options."""

    def __init__(self, text: str) -> None:
        self.t = _Tokens(text)
        self.o: dict[str, Any] = {}
        self.freq: Frequency = du.DAILY

    def parse(self) -> Rule:
        if not self.t.next():
            raise RecurrenceError("not a rule")
        self._s()
        o = self.o
        # Values no date can take: rrule.js would search forever (the plugin then writes an
        # invalid date); refused here.
        if not all(0 <= h <= 23 for h in o.get("byhour", ())):
            raise RecurrenceError("an hour must be 0 to 23")
        if not all(1 <= abs(d) <= 31 for d in o.get("bymonthday", ())):
            raise RecurrenceError("a day of the month must be 1 to 31")
        if not all(1 <= w <= 53 for w in o.get("byweekno", ())):
            raise RecurrenceError("a week number must be 1 to 53")
        days, months = o.get("bymonthday", ()), o.get("bymonth", ())
        if days and months and all(d > max(_DAYS_IN_MONTH[m - 1] for m in months) for d in days):
            raise RecurrenceError("no month it names has that day")
        return Rule(self.freq, o)

    def _s(self) -> None:
        """`every [N]`, then what recurs."""
        t = self.t
        t.expect("every")
        n = t.accept("number")
        if n is not None:
            self.o["interval"] = int(n.group())
        if t.is_done():
            raise RecurrenceError("unexpected end")
        self._what(t.symbol)

    def _what(self, symbol: str | None) -> None:
        t = self.t
        if symbol == "day(s)":
            self.freq = du.DAILY
            if t.next():
                self._at()
                self._f()
        elif symbol == "weekday(s)":
            self.freq = du.WEEKLY
            self.o["byweekday"] = list(_WORKDAYS)
            t.next()
            self._at()
            self._f()
        elif symbol in _PERIODS:
            self.freq = _PERIODS[symbol]
            if t.next():
                self._on()
                if symbol == "week(s)":
                    self._at()
                self._f()
        elif symbol in _WEEKDAYS:
            self.freq = du.WEEKLY
            if self._names("byweekday", _WEEKDAYS[symbol], _WEEKDAYS, "weekday"):
                self._at()
                self._mdays()
                self._f()
        elif symbol in _MONTHS:
            self.freq = du.YEARLY
            if self._names("bymonth", _MONTHS.index(symbol) + 1, _MONTH_NUMBERS, "month"):
                self._on()
                self._f()
        else:
            raise RecurrenceError("unknown symbol")

    def _names(self, key: str, first: Any, names: dict[str, Any], what: str) -> bool:
        """`Monday, Wednesday and Friday` / `January, July`: the list into `key`; False when
        the rule ends after it."""
        t = self.t
        self.o[key] = [first]
        if not t.next():
            return False
        while t.accept("comma"):
            if t.is_done():
                raise RecurrenceError("unexpected end")
            if t.symbol not in names:
                raise RecurrenceError(f"expected {what}")
            self.o[key].append(names[t.symbol])
            t.next()
        return True

    def _nth(self) -> int | None:
        """decodeNTH: an ordinal (consumed), or None (nothing consumed)."""
        t = self.t
        symbol = t.symbol
        if symbol == "last":
            t.next()
            return -1
        if symbol == "first":
            t.next()
            return 1
        if symbol in ("second", "third"):
            t.next()
            n = 2 if symbol == "second" else 3
            return -n if t.accept("last") else n
        if symbol == "nth" and t.value is not None:
            v = int(t.value.group(1))
            if v > 366:
                raise RecurrenceError("nth out of range")
            t.next()
            return -v if t.accept("last") else v
        return None

    def _on(self) -> None:
        t = self.t
        on = t.accept("on")
        the = t.accept("the")
        if on is None and the is None:
            return
        while True:
            nth = self._nth()
            wkd = _WEEKDAYS.get(t.symbol or "")
            month = _MONTHS.index(t.symbol) + 1 if t.symbol in _MONTHS else None
            if nth is not None:
                if wkd is not None:
                    t.next()
                    self.o.setdefault("byweekday", []).append(wkd(nth))
                else:
                    self.o.setdefault("bymonthday", []).append(nth)
                    t.accept("day(s)")
            elif wkd is not None:
                t.next()
                self.o.setdefault("byweekday", []).append(wkd)
            elif t.symbol == "weekday(s)":
                t.next()
                self.o.setdefault("byweekday", list(_WORKDAYS))
            elif t.symbol == "week(s)":
                t.next()
                self.o["byweekno"] = [self._number("week number")]
                while t.accept("comma"):
                    self.o["byweekno"].append(self._number("monthday"))
            elif month is not None:
                t.next()
                self.o.setdefault("bymonth", []).append(month)
            else:
                return
            if not (t.accept("comma") or t.accept("the") or t.accept("on")):
                return

    def _number(self, what: str) -> int:
        n = self.t.accept("number")
        if n is None:
            raise RecurrenceError(f"expected {what}")
        return int(n.group())

    def _at(self) -> None:
        t = self.t
        if t.accept("at") is None:
            return
        while True:
            self.o["byhour"] = [self._number("hour")]
            while t.accept("comma"):
                self.o["byhour"].append(self._number("hour"))
            if not (t.accept("comma") or t.accept("at")):
                return

    def _mdays(self) -> None:
        t = self.t
        t.accept("on")
        t.accept("the")
        nth = self._nth()
        if nth is None:
            return
        self.o["bymonthday"] = [nth]
        t.next()  # rrule.js advances once more here (decodeNTH has already moved on)
        while t.accept("comma"):
            nth = self._nth()
            if nth is None:
                raise RecurrenceError("expected monthday")
            self.o["bymonthday"].append(nth)
            t.next()

    def _f(self) -> None:
        t = self.t
        if t.symbol == "until":
            raise RecurrenceError("'until' is not supported")
        if t.accept("for") is not None:
            self.o["count"] = self._number("number")


def parse_rule(text: str) -> Rule:
    """The rule of a task's recurrence text (`every week on Monday when done`).

    Raises:
        RecurrenceError: text the Tasks plugin's parser cannot read, or `until`.
    """
    m = _WHEN_DONE_RE.match(text)
    if m is None:
        raise RecurrenceError("not a recurrence rule")
    rule = _Parser(m.group(1).strip()).parse()
    return replace(rule, when_done=m.group(2) is not None)
