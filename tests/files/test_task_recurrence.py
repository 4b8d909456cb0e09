"""Recurrence as the Tasks plugin computes it: its own test cases, and dates checked against
python-dateutil rules built independently in the test (never through the module's parser)."""

from __future__ import annotations

import datetime as dt

import pytest
from dateutil import relativedelta as rd
from dateutil import rrule as du
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vault_agent.files.task_recurrence import Dates, next_dates
from vault_agent.files.task_rule_text import RecurrenceError, parse_rule

D = dt.date.fromisoformat
FAR = D("2040-01-01")  # "today" where a case does not depend on it

# The plugin's cases, by hand from obsidian-tasks tests/Task/Task.test.ts (recurrenceCases)
# and tests/Task/Recurrence.test.ts: (rule, dates, today, expected next dates).
PLUGIN_CASES: list[tuple[str, dict[str, str], str | None, dict[str, str]]] = [
    ("every 7 days", {"due": "2021-02-21"}, None, {"due": "2021-02-28"}),
    ("every 7 days when done", {"due": "2021-02-21"}, "2021-02-18", {"due": "2021-02-25"}),
    ("every 7 days when done", {"due": "2021-02-21"}, "2021-02-22", {"due": "2021-03-01"}),
    ("every day", {"due": "2021-02-21"}, None, {"due": "2021-02-22"}),
    ("every day when done", {"due": "2021-02-21"}, "2022-01-04", {"due": "2022-01-05"}),
    ("every 4 weeks", {"due": "2021-10-15"}, None, {"due": "2021-11-12"}),
    ("every 4 weeks", {"due": "2021-10-12"}, None, {"due": "2021-11-09"}),
    ("every 4 weeks", {"due": "2033-10-12"}, None, {"due": "2033-11-09"}),
    ("every 3 weeks when done", {"due": "2022-01-10"}, "2021-01-14", {"due": "2021-02-04"}),
    ("every month", {"due": "2021-10-15"}, None, {"due": "2021-11-15"}),
    ("every month when done", {"due": "2021-10-18"}, "2021-10-16", {"due": "2021-11-16"}),
    ("every month when done", {"due": "2021-10-18"}, "2021-10-24", {"due": "2021-11-24"}),
    ("every month on the 2nd Wednesday", {"due": "2021-09-08"}, None, {"due": "2021-10-13"}),
    (
        "every month on the 2nd Wednesday when done",
        {"due": "2021-09-08"},
        "2021-09-15",
        {"due": "2021-10-13"},
    ),
    (
        "every month on the 2nd Wednesday when done",
        {"due": "2021-09-08"},
        "2021-10-12",
        {"due": "2021-10-13"},
    ),
    (
        "every month on the 2nd Wednesday when done",
        {"due": "2021-09-08"},
        "2021-10-13",
        {"due": "2021-11-10"},
    ),
    ("every 3 months on the 3rd Thursday", {"due": "2021-04-15"}, None, {"due": "2021-07-15"}),
    ("every 3 months on the 3rd Thursday", {"due": "2021-08-19"}, None, {"due": "2021-11-18"}),
    ("every 3 months on the 3rd Thursday", {"due": "2021-09-16"}, None, {"due": "2021-12-16"}),
    ("every week on Monday, Wednesday, Friday", {"due": "2022-01-24"}, None, {"due": "2022-01-26"}),
    (
        "every week on Monday, Wednesday, Friday when done",
        {"due": "2022-01-24"},
        "2022-01-25",
        {"due": "2022-01-26"},
    ),
    (
        "every week on Monday, Wednesday, Friday when done",
        {"due": "2022-01-24"},
        "2022-01-26",
        {"due": "2022-01-28"},
    ),
    ("every 5 days", {"start": "2021-10-10"}, None, {"start": "2021-10-15"}),
    ("every 5 days", {"scheduled": "2021-10-10"}, None, {"scheduled": "2021-10-15"}),
    (
        "every 5 days",
        {"start": "2021-10-10", "due": "2021-10-11"},
        None,
        {"start": "2021-10-15", "due": "2021-10-16"},
    ),
    (
        "every 5 days",
        {"start": "2021-10-09", "scheduled": "2021-10-10", "due": "2021-10-11"},
        None,
        {"start": "2021-10-14", "scheduled": "2021-10-15", "due": "2021-10-16"},
    ),
    (
        "every 10 days when done",
        {"start": "2021-10-05", "scheduled": "2021-10-07", "due": "2021-10-09"},
        "2021-10-04",
        {"start": "2021-10-10", "scheduled": "2021-10-12", "due": "2021-10-14"},
    ),
    (
        "every 10 days when done",
        {"start": "2021-10-05", "scheduled": "2021-10-07", "due": "2021-10-09"},
        "2021-10-10",
        {"start": "2021-10-16", "scheduled": "2021-10-18", "due": "2021-10-20"},
    ),
    (
        "every month on the 15th",
        {"due": "2025-08-16", "scheduled": "2025-08-11", "start": "2025-08-06"},
        None,
        {"due": "2025-09-15", "scheduled": "2025-09-10", "start": "2025-09-05"},
    ),
    (
        "every month on the 15th",
        {"scheduled": "2025-08-10", "start": "2025-08-05"},
        None,
        {"scheduled": "2025-08-15", "start": "2025-08-10"},
    ),
    ("every month", {"due": "2021-03-31"}, None, {"due": "2021-04-30"}),
    ("every month", {"due": "2021-01-29"}, None, {"due": "2021-02-28"}),
    ("every month on the 31st", {"due": "2021-01-31"}, None, {"due": "2021-03-31"}),
    ("every year on February the 29th", {"due": "2021-01-01"}, None, {"due": "2024-02-29"}),
    ("every year", {"due": "2020-02-29"}, None, {"due": "2021-02-28"}),
    ("every month when done", {"scheduled": "1999-01-23"}, "2021-08-31", {"scheduled": "2021-09-30"}),
    ("every 2 years when done", {"start": "1999-01-23"}, "2020-02-29", {"start": "2022-02-28"}),
    ("every month", {"due": "2022-01-31"}, None, {"due": "2022-02-28"}),
    ("every 3 months", {"due": "2022-01-31"}, None, {"due": "2022-04-30"}),
    ("every 2 months", {"due": "2023-12-31"}, None, {"due": "2024-02-29"}),
    ("every 2 years", {"due": "2024-02-29"}, None, {"due": "2026-02-28"}),
    ("every 11 months", {"due": "2020-03-31"}, None, {"due": "2021-02-28"}),
    ("every 13 months", {"due": "2020-01-31"}, None, {"due": "2021-02-28"}),
    # the task carries the rule after its due date: same result
    ("every day", {"due": "2021-09-12"}, None, {"due": "2021-09-13"}),
    # Recurrence.test.ts: a lower-priority invalid date takes the reference date's new value
    (
        "every day",
        {"due": "2022-02-27", "scheduled": "2022-02-30"},
        None,
        {"due": "2022-02-28", "scheduled": "2022-02-28"},
    ),
]


def _dates(given_dates: dict[str, str]) -> Dates:
    valid = {k: D(v) for k, v in given_dates.items() if _valid(v)}
    return Dates(**valid, invalid=frozenset(k for k, v in given_dates.items() if not _valid(v)))


def _valid(text: str) -> bool:
    try:
        D(text)
    except ValueError:
        return False
    return True


def _iso(dates: Dates | None) -> dict[str, str]:
    assert dates is not None
    return {k: getattr(dates, k).isoformat() for k in ("due", "scheduled", "start") if getattr(dates, k)}


@pytest.mark.parametrize(("rule", "given_dates", "today", "expected"), PLUGIN_CASES)
def test_the_plugins_own_cases(
    rule: str, given_dates: dict[str, str], today: str | None, expected: dict[str, str]
) -> None:
    got = next_dates(parse_rule(rule), _dates(given_dates), D(today) if today else FAR)
    assert _iso(got) == expected


def test_remove_scheduled_date_on_recurrence() -> None:
    """Recurrence.test.ts 'with removeScheduledDateOnRecurrence'."""
    dates = Dates(start=D("2022-01-01"), scheduled=D("2022-01-04"), due=D("2022-01-10"))
    assert _iso(next_dates(parse_rule("every month"), dates, FAR, remove_scheduled=True)) == {
        "start": "2022-02-01",
        "due": "2022-02-10",
    }
    only = Dates(scheduled=D("2022-01-04"))
    assert _iso(next_dates(parse_rule("every month"), only, FAR, remove_scheduled=True)) == {
        "scheduled": "2022-02-04"
    }
    # start before scheduled as the reference date, counted from today (when done)
    both = Dates(start=D("2022-01-01"), scheduled=D("2022-01-04"))
    got = next_dates(parse_rule("every 3 days when done"), both, D("2022-01-10"), remove_scheduled=True)
    assert _iso(got) == {"start": "2022-01-13"}


def test_a_task_without_dates_recurs_without_dates() -> None:
    assert next_dates(parse_rule("every week"), Dates(), D("2024-05-16")) == Dates()


def test_no_occurrence_left_is_none() -> None:
    assert next_dates(parse_rule("every day for 1 time"), Dates(due=D("2024-05-01")), FAR) is None
    assert next_dates(parse_rule("every day for 3 times"), Dates(due=D("2024-05-01")), FAR) == Dates(
        due=D("2024-05-02")
    )


def test_an_invalid_reference_date_is_refused() -> None:
    with pytest.raises(RecurrenceError, match="due date is no calendar date"):
        next_dates(parse_rule("every day"), Dates(invalid=frozenset({"due"})), FAR)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("every two weeks", "unknown symbol"),  # rrule.js has no number words either
        ("every blue moon", "unexpected end"),
        ("every", "unexpected end"),
        ("every 3", "unexpected end"),
        ("each day", "not a rule"),
        ("every day until January 5 2025", "'until' is not supported"),
        ("every day at 25", "an hour must be 0 to 23"),
        ("every month on the 32nd", "a day of the month must be 1 to 31"),
        ("every year on February the 30th", "no month it names has that day"),
        ("every Monday, May", "expected weekday"),
        ("every 2 weeks on week", "expected week number"),
        ("every-day", "not a recurrence rule"),
    ],
)
def test_rules_the_plugin_cannot_use_are_refused_by_name(text: str, reason: str) -> None:
    with pytest.raises(RecurrenceError, match=reason):
        rule = parse_rule(text)
        next_dates(rule, Dates(due=D("2024-01-01")), FAR)


def test_what_rrule_js_reads_the_same_way() -> None:
    """Forms of rrule.js's grammar, with the options it builds (parsetext.ts)."""
    assert parse_rule("every weekday").options == {"byweekday": [du.MO, du.TU, du.WE, du.TH, du.FR]}
    assert parse_rule("every Tuesday and Thursday").options == {"byweekday": [du.TU, du.TH]}
    assert parse_rule("every month on the last").options == {"bymonthday": [-1]}
    assert parse_rule("every month on the last Friday").options == {"byweekday": [du.FR(-1)]}
    assert parse_rule("every January, July").options == {"bymonth": [1, 7]}
    assert parse_rule("Every Day When Done").when_done
    assert parse_rule("everyday").freq == du.DAILY
    # a word rrule.js has no token for ends the rule there, as in the plugin
    assert parse_rule("every week please") == parse_rule("every week")
    with pytest.raises(RecurrenceError, match="expected number"):
        parse_rule("every week fortnightly")  # "for" then no number: rrule.js throws too


WEEKDAYS = [du.MO, du.TU, du.WE, du.TH, du.FR, du.SA, du.SU]
NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
DAYS = st.dates(min_value=D("1990-01-01"), max_value=D("2090-12-31"))


def _dateutil_next(start: dt.date, **options: object) -> dt.date:
    """The first occurrence after `start`'s day of a rule started on `start`."""
    begin = dt.datetime(start.year, start.month, start.day)
    found = du.rrule(dtstart=begin, **options).after(begin + dt.timedelta(hours=23, minutes=59))  # type: ignore[arg-type]
    assert found is not None
    return found.date()


@settings(max_examples=150, deadline=None)
@given(due=DAYS, n=st.integers(1, 40), unit=st.sampled_from(["day", "week"]), offset=st.integers(-20, 20))
def test_every_n_days_and_weeks_against_dateutil(due: dt.date, n: int, unit: str, offset: int) -> None:
    text = f"every {n} {unit}s" if n > 1 else f"every {unit}"
    start = due + dt.timedelta(days=offset)
    freq = du.DAILY if unit == "day" else du.WEEKLY
    expected_due = _dateutil_next(due, freq=freq, interval=n)
    got = next_dates(parse_rule(text), Dates(due=due, start=start), FAR)
    assert got == Dates(due=expected_due, start=expected_due + dt.timedelta(days=offset))


@settings(max_examples=150, deadline=None)
@given(due=DAYS, days=st.sets(st.integers(0, 6), min_size=1, max_size=7), today=DAYS, when_done=st.booleans())
def test_every_week_on_weekdays_against_dateutil(
    due: dt.date, days: set[int], today: dt.date, when_done: bool
) -> None:
    names = [NAMES[d] for d in sorted(days)]
    text = "every week on " + ", ".join(names) + (" when done" if when_done else "")
    base = today if when_done else due
    expected = _dateutil_next(base, freq=du.WEEKLY, byweekday=[WEEKDAYS[d] for d in sorted(days)])
    assert next_dates(parse_rule(text), Dates(due=due), today) == Dates(due=expected)


@settings(max_examples=150, deadline=None)
@given(due=DAYS, day=st.integers(1, 31), n=st.integers(1, 12), last=st.booleans())
def test_every_month_on_a_day_against_dateutil(due: dt.date, day: int, n: int, last: bool) -> None:
    ordinal = (
        "last"
        if last
        else f"{day}{'st' if day in (1, 21, 31) else 'nd' if day in (2, 22) else 'rd' if day in (3, 23) else 'th'}"
    )
    text = f"every {n} months on the {ordinal}" if n > 1 else f"every month on the {ordinal}"
    expected = _dateutil_next(due, freq=du.MONTHLY, interval=n, bymonthday=-1 if last else day)
    assert next_dates(parse_rule(text), Dates(due=due), FAR) == Dates(due=expected)


@example(due=dt.date(2000, 1, 1), n=25, unit="year", today=dt.date(2000, 2, 29), when_done=True)
@settings(max_examples=200, deadline=None)
@given(
    due=DAYS,
    n=st.integers(1, 30),
    unit=st.sampled_from(["month", "year"]),
    today=DAYS,
    when_done=st.booleans(),
)
def test_every_n_months_and_years_never_skip_a_short_month(
    due: dt.date, n: int, unit: str, today: dt.date, when_done: bool
) -> None:
    """The plugin's correction makes `every N months` the same day N months on, clamped to
    the month's end: dateutil's relativedelta, independently."""
    text = (f"every {n} {unit}s" if n > 1 else f"every {unit}") + (" when done" if when_done else "")
    base = today if when_done else due
    step = rd.relativedelta(months=n) if unit == "month" else rd.relativedelta(years=n)
    got = next_dates(parse_rule(text), Dates(due=due), today)
    assert got == Dates(due=base + step)


ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyz0123456789 ,!")
    + ["every ", "day", " on the ", "last", "week", "month", "1st"]
)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(ALPHABET, max_size=12).map("".join), due=DAYS)
def test_any_rule_text_gives_dates_or_a_named_refusal(text: str, due: dt.date) -> None:
    try:
        got = next_dates(parse_rule(text), Dates(due=due), due)
    except RecurrenceError:
        return
    assert got is None or (got.due is not None and got.due > due)
