"""The next occurrence of a recurring task, by the Tasks plugin's rules (pure, no I/O).

`task_rule_text` reads the rule; python-dateutil's `rrule` iterates it (the standard that
the plugin's rrule.js is a port of). What the plugin adds on top (`src/Task/Recurrence.ts`,
`src/Task/Occurrence.ts`), mirrored here:

- the rule starts on the reference date (due, else scheduled, else start; start before
  scheduled when `removeScheduledDateOnRecurrence` is on), or today for `when done` and for
  a task without dates; the next reference date is the first occurrence after that day;
- `every month` / `every N months` without `on …`, and `every year` / `every N years`, never
  skip past the interval: from Jan 31 `every month` gives Feb 28, not Mar 31 (the plugin
  steps the start back a day at a time until the next date falls in the right month/year);
- every other date keeps its distance in days to the reference date (an invalid one takes
  the reference date's new value, as in the plugin);
- no occurrence left (`for 3 times` from its start, or none within the horizon): no next one.

An invalid reference date is refused (`RecurrenceError`): the plugin then drops the rule.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from dateutil import rrule as du

from vault_agent.files.task_rule_text import RecurrenceError, Rule

# A next occurrence is looked for this far after the reference date, so that a rule no date
# satisfies ends there instead of iterating to year 9999 (rrule.js would search as long).
# 100 years hold every weekday/date cycle (28 years); hourly and minutely rules (dates only
# here: `every hour` means the next day, as in the plugin) get 10, which keeps them fast.
HORIZON_YEARS = 100
HORIZON_YEARS_SUBDAILY = 10
_MAX_STEPS_BACK = 366  # the month/year correction moves a day at a time (a few days in practice)


@dataclass(frozen=True)
class Dates:
    """The dates a recurrence moves; None where the task has none. An invalid date (text
    that is no calendar date) is `invalid`: it takes the reference date's new value, as in
    the plugin."""

    due: dt.date | None = None
    scheduled: dt.date | None = None
    start: dt.date | None = None
    invalid: frozenset[str] = frozenset()


def _day_start(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day)


def _after(rule: Rule, start: dt.datetime, after: dt.datetime) -> dt.datetime | None:
    """rrule.js `new RRule({...options, dtstart: start}).after(after)`: the first occurrence
    strictly after `after`, within the horizon and the rule's `count`."""
    options = {k: v for k, v in rule.options.items() if k != "count"}
    years = HORIZON_YEARS_SUBDAILY if rule.freq in (du.HOURLY, du.MINUTELY) else HORIZON_YEARS
    until = _day_start(after.date().replace(year=min(after.year + years, dt.MAXYEAR), day=1))
    try:
        it = du.rrule(rule.freq, dtstart=start, until=until, **options)
        found = it.after(after)
        if found is None or "count" not in rule.options:
            return found
        # The count starts at `start`: the occurrence must be among the first `count`.
        for position, occurrence in enumerate(it, start=1):
            if occurrence >= found:
                return found if position <= rule.options["count"] else None
    except (ValueError, OverflowError):
        raise RecurrenceError("the rule gives no date the calendar holds") from None
    return None


def _too_far(rule: Rule, after: dt.datetime, found: dt.datetime) -> bool:
    """Recurrence.isSkippingTooManyMonths / isSkippingTooManyYears (module doc)."""
    if rule.month_check:
        return (found.year - after.year) * 12 + found.month - after.month > rule.interval
    return rule.year_check and found.year - after.year > rule.interval


def _next_after(rule: Rule, start: dt.date, day: dt.date) -> dt.date | None:
    """Recurrence.nextAfter: the first occurrence after the end of `day`, never skipping
    past the interval of `every [N] month(s)` / `every [N] year(s)` (module doc)."""
    after = _day_start(day) + dt.timedelta(days=1) - dt.timedelta(microseconds=1000)
    found = _after(rule, _day_start(start), after)
    corrected = rule.month_check or rule.year_check
    if found is None and (not corrected or "count" in rule.options):
        return None  # no occurrence left (`for N times`), or none within the horizon
    steps = 0
    # Nothing within the horizon is "too far" too: rrule.js, which has none, would find a
    # date past it (`every 25 years` from 29 February: the next 29 February 25k years on)
    # and the plugin's correction would then step back to 28 February.
    while found is None or _too_far(rule, after, found):
        # Recurrence.fromOneDayEarlier: a day earlier, and the rule started on that day
        # (`after` is moved to the start of the day there, as moment's startOf does).
        steps += 1
        if steps > _MAX_STEPS_BACK:
            raise RecurrenceError("the rule gives no date within its interval")
        after = _day_start(after.date() - dt.timedelta(days=1))
        found = _after(rule, after, after)
    return found.date()


def reference_date(dates: Dates, scheduled_last: bool) -> tuple[str, dt.date | None] | None:
    """The date the rule counts from (Occurrence.referenceDate): (field, its date, None when
    invalid), or None without any date. `scheduled_last`: removeScheduledDateOnRecurrence."""
    order = ("due", "start", "scheduled") if scheduled_last else ("due", "scheduled", "start")
    for name in order:
        value = getattr(dates, name)
        if value is not None or name in dates.invalid:
            return name, value
    return None


def next_dates(rule: Rule, dates: Dates, today: dt.date, remove_scheduled: bool = False) -> Dates | None:
    """The dates of the next occurrence (Recurrence.next + Occurrence.next), or None when
    the rule has no occurrence left (`for N times`, or none within the horizon).

    Raises:
        RecurrenceError: the reference date is no calendar date, or the rule fails to iterate.
    """
    ref = reference_date(dates, remove_scheduled)
    if ref is not None and ref[1] is None:
        raise RecurrenceError(f"the {ref[0]} date is no calendar date")
    ref_day = ref[1] if ref is not None else None
    base = today if rule.when_done or ref_day is None else ref_day
    nxt = _next_after(rule, base, base)
    if nxt is None:
        return None
    if ref_day is None:
        return Dates()  # no dates to move: the next occurrence has none either

    def moved(name: str) -> dt.date | None:
        value: dt.date | None = getattr(dates, name)
        if name in dates.invalid:
            return nxt
        return None if value is None else nxt + (value - ref_day)

    drop_scheduled = remove_scheduled and (dates.start is not None or dates.due is not None)
    return Dates(
        due=moved("due"),
        scheduled=None if drop_scheduled else moved("scheduled"),
        start=moved("start"),
    )
