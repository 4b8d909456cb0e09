"""Date phrases of Tasks queries: the plugin's own reference tables (its approved explanations,
run on 2023-04-19, a Wednesday, and its DateParser tests), then properties."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.task_dates import (
    DateRange,
    DateSearch,
    add_months,
    parse_date,
    parse_date_range,
    parse_date_search,
    relative_range,
)

WEDNESDAY = dt.date(2023, 4, 19)  # the "today" of the plugin's DateFieldReference approvals


def d(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


# tests/Query/Filter/ReferenceDocs/FilterReference/DateFieldReference.test
# .explain_date_reference_filters-date-examples.approved.explanation.text
@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("today", "2023-04-19"),
        ("yesterday", "2023-04-18"),
        ("tomorrow", "2023-04-20"),
        ("next monday", "2023-04-24"),
        ("last friday", "2023-04-14"),
        ("14 days ago", "2023-04-05"),
        ("in two weeks", "2023-05-03"),
        ("14 October", "2023-10-14"),
        ("May", "2023-05-01"),
    ],
)
def test_docs_date_examples(phrase: str, expected: str) -> None:
    assert parse_date(phrase, WEDNESDAY) == d(expected)


# ...explain_date_reference_last-this-next-weekday.approved.explanation.text
WEEKDAY_TABLE = {
    "monday": ("2023-04-17", "2023-04-10", "2023-04-17", "2023-04-24"),
    "tuesday": ("2023-04-18", "2023-04-11", "2023-04-18", "2023-04-25"),
    "wednesday": ("2023-04-19", "2023-04-12", "2023-04-19", "2023-04-26"),
    "thursday": ("2023-04-20", "2023-04-13", "2023-04-20", "2023-04-27"),
    "friday": ("2023-04-21", "2023-04-14", "2023-04-21", "2023-04-28"),
    "saturday": ("2023-04-22", "2023-04-15", "2023-04-22", "2023-04-29"),
    "sunday": ("2023-04-16", "2023-04-09", "2023-04-16", "2023-04-23"),
}


@pytest.mark.parametrize("weekday", sorted(WEEKDAY_TABLE))
def test_docs_weekdays(weekday: str) -> None:
    bare, last, this, nxt = WEEKDAY_TABLE[weekday]
    assert parse_date(weekday, WEDNESDAY) == d(bare)
    assert parse_date(f"last {weekday}", WEDNESDAY) == d(last)
    assert parse_date(f"this {weekday}", WEDNESDAY) == d(this)
    assert parse_date(f"next {weekday}", WEDNESDAY) == d(nxt)
    assert parse_date(f"{weekday} next week", WEDNESDAY) == d(nxt)


# ...explain_date_reference_last-this-next-week-month-quarter-year.approved.explanation.text
RANGE_TABLE = {
    "last week": ("2023-04-10", "2023-04-16"),
    "this week": ("2023-04-17", "2023-04-23"),
    "next week": ("2023-04-24", "2023-04-30"),
    "last month": ("2023-03-01", "2023-03-31"),
    "this month": ("2023-04-01", "2023-04-30"),
    "next month": ("2023-05-01", "2023-05-31"),
    "last quarter": ("2023-01-01", "2023-03-31"),
    "this quarter": ("2023-04-01", "2023-06-30"),
    "next quarter": ("2023-07-01", "2023-09-30"),
    "last year": ("2022-01-01", "2022-12-31"),
    "this year": ("2023-01-01", "2023-12-31"),
    "next year": ("2024-01-01", "2024-12-31"),
}


@pytest.mark.parametrize("phrase", sorted(RANGE_TABLE))
def test_docs_relative_ranges(phrase: str) -> None:
    start, end = RANGE_TABLE[phrase]
    assert parse_date_range(phrase, WEDNESDAY) == DateRange(d(start), d(end))
    assert parse_date_range(phrase.upper(), WEDNESDAY) == DateRange(d(start), d(end))


# tests/DateTime/DateParser.test.ts, "relative date ranges" on 2021-10-06
@pytest.mark.parametrize(
    ("phrase", "start", "end"),
    [
        ("last week", "2021-09-27", "2021-10-03"),
        ("this week", "2021-10-04", "2021-10-10"),
        ("next week", "2021-10-11", "2021-10-17"),
        ("last month", "2021-09-01", "2021-09-30"),
        ("next month", "2021-11-01", "2021-11-30"),
        ("last quarter", "2021-07-01", "2021-09-30"),
        ("next quarter", "2022-01-01", "2022-03-31"),
        ("last year", "2020-01-01", "2020-12-31"),
    ],
)
def test_parser_relative_ranges(phrase: str, start: str, end: str) -> None:
    assert parse_date_range(phrase, d("2021-10-06")) == DateRange(d(start), d(end))


# DateParser.test.ts "numbered date ranges" and "date ranges"
@pytest.mark.parametrize(
    ("phrase", "start", "end"),
    [
        ("2020-W53", "2020-12-28", "2021-01-03"),
        ("2021-W01", "2021-01-04", "2021-01-10"),
        ("2018-W52", "2018-12-24", "2018-12-30"),
        ("2019-W01", "2018-12-31", "2019-01-06"),
        ("2019-W02", "2019-01-07", "2019-01-13"),
        ("2002-02", "2002-02-01", "2002-02-28"),
        ("2024-02", "2024-02-01", "2024-02-29"),
        ("2017-12", "2017-12-01", "2017-12-31"),
        ("2007-Q1", "2007-01-01", "2007-03-31"),
        (" 2023-Q3", "2023-07-01", "2023-09-30"),
        ("  2021-W30", "2021-07-26", "2021-08-01"),
        ("1996", "1996-01-01", "1996-12-31"),
        ("2022 ", "2022-01-01", "2022-12-31"),
        ("17 August 2013 19 August 2013", "2013-08-17", "2013-08-19"),
        ("2013-08-17   2014-08-19", "2013-08-17", "2014-08-19"),
        ("2017-08-17 2014-08-19", "2014-08-19", "2017-08-17"),
        ("2019-12-28", "2019-12-28", "2019-12-28"),
    ],
)
def test_parser_numbered_and_absolute_ranges(phrase: str, start: str, end: str) -> None:
    assert parse_date_range(phrase, WEDNESDAY) == DateRange(d(start), d(end))


@pytest.mark.parametrize(
    "phrase",
    ["2020-W54", "2018-W53", "2021-W0", "2021-W00", "2023-Q0", "2023-Q5", "2017-13", "2023-00",
     "20167", "2021-13-17", "2023-12-32", "2023-02-29", "2015-99-29 2015-99-29",
     # refused where the plugin keeps the valid half of a range (never guessed here)
     "2013-99-29 2014-08-19",
     # two relative dates are no range (the plugin's docs say so)
     "next monday three weeks", "today tomorrow",
     # a date followed by other words: chrono would pick the date out and drop the rest
     "2023-01-01 oops", "today please",
     # times and fuzzy amounts are not read
     "today at 5pm", "in a few days", "in 3 hours", "",
     "jan", "in 9999999 years", "99999 years ago"],
)  # fmt: skip
def test_refused_phrases(phrase: str) -> None:
    assert parse_date_range(phrase, WEDNESDAY) is None


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("in 3 days", "2023-04-22"),
        ("3 days from now", "2023-04-22"),
        ("a week ago", "2023-04-12"),
        ("in 1 month", "2023-05-19"),
        ("2 quarters ago", "2022-10-19"),
        ("in a year", "2024-04-19"),
        ("14th of October 2021", "2021-10-14"),
        ("Oct 14th, 2024", "2024-10-14"),
        ("October 14", "2023-10-14"),
        ("jan 2020", "2020-01-01"),
        ("2023/04/01", "2023-04-01"),
        ("Past Sunday", "2023-04-09"),
        ("thu.", "2023-04-20"),
        ("now", "2023-04-19"),
    ],
)
def test_more_phrases(phrase: str, expected: str) -> None:
    assert parse_date(phrase, WEDNESDAY) == d(expected)


def test_month_name_without_year_takes_the_closest_year() -> None:
    # chrono's findYearClosestToRef (the plugin's docs simplify it to "the current year")
    assert parse_date("January", d("2023-11-30")) == d("2024-01-01")
    assert parse_date("December 20", d("2024-01-05")) == d("2023-12-20")
    assert parse_date("29 February", d("2023-04-19")) == d("2024-02-29")


def test_months_clip_to_the_last_day() -> None:
    assert parse_date("in 1 month", d("2023-01-31")) == d("2023-02-28")
    assert parse_date("a year ago", d("2024-02-29")) == d("2023-02-28")
    assert add_months(d("2024-03-31"), -1) == d("2024-02-29")


def test_weekday_alone_is_the_closest() -> None:
    sunday = d("2023-04-23")
    assert parse_date("thursday", sunday) == d("2023-04-20")  # 3 days back, not 4 ahead
    assert parse_date("wednesday", sunday) == d("2023-04-26")  # 3 ahead, not 4 back


# The plugin's date-search keywords (docs/Queries/Filters.md, "Appendix: Tasks 2.0.0
# improvements to date filters", run on Friday 2023-02-10)
FRIDAY = d("2023-02-10")


@pytest.mark.parametrize(
    ("text", "relation", "start", "end"),
    [
        ("before 2023-02-07 2023-02-11", "before", "2023-02-07", "2023-02-11"),
        ("on 2023-02-07 2023-02-11", "on", "2023-02-07", "2023-02-11"),
        ("in 2023-02-07 2023-02-11", "on", "2023-02-07", "2023-02-11"),
        ("2023-02-07 2023-02-11", "on", "2023-02-07", "2023-02-11"),
        ("after last week", "after", "2023-01-30", "2023-02-05"),
        ("before this week", "before", "2023-02-06", "2023-02-12"),
        ("in next week", "on", "2023-02-13", "2023-02-19"),
        ("in or before next week", "on or before", "2023-02-13", "2023-02-19"),
        ("on or after today", "on or after", "2023-02-10", "2023-02-10"),
        ("in two weeks", "on", "2023-02-24", "2023-02-24"),
        ("before in two weeks", "before", "2023-02-24", "2023-02-24"),
        ("in may", "on", "2023-05-01", "2023-05-01"),
    ],
)
def test_date_search(text: str, relation: str, start: str, end: str) -> None:
    assert parse_date_search(text, FRIDAY) == DateSearch(relation, DateRange(d(start), d(end)))  # type: ignore[arg-type]


def test_date_search_semantics() -> None:
    week = DateRange(d("2023-02-06"), d("2023-02-12"))
    days = [d("2023-02-05"), d("2023-02-06"), d("2023-02-09"), d("2023-02-12"), d("2023-02-13")]
    expected = {
        "before": [True, False, False, False, False],
        "on": [False, True, True, True, False],
        "after": [False, False, False, False, True],
        "on or before": [True, True, True, True, False],
        "on or after": [False, True, True, True, True],
    }
    for relation, want in expected.items():
        assert [DateSearch(relation, week).matches(x) for x in days] == want, relation  # type: ignore[arg-type]


def test_date_search_refuses_no_date() -> None:
    assert parse_date_search("before", FRIDAY) is None
    assert parse_date_search("before the deadline", FRIDAY) is None
    assert parse_date_search("info", FRIDAY) is None


days = st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31))
WORDS = ["last", "this", "next", "in", "ago", "week", "month", "quarter", "year", "monday", "may",
         "14", "2023", "2023-04-19", "-", "W", "Q2", "days", "a", "of", "today", "before", "on"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), days)
def test_never_crashes_on_any_text(text: str, today: dt.date) -> None:
    found = parse_date_range(text, today)
    assert found is None or found.start <= found.end
    search = parse_date_search(text, today)
    assert search is None or search.range.start <= search.range.end


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), days)
def test_word_soup_ranges_are_ordered(words: list[str], today: dt.date) -> None:
    found = parse_date_range(" ".join(words), today)
    assert found is None or found.start <= found.end


@settings(max_examples=200, deadline=None)
@given(days, st.sampled_from(["last", "this", "next"]), st.sampled_from(["week", "month", "quarter", "year"]))
def test_relative_ranges_hold_or_border_today(today: dt.date, which: str, unit: str) -> None:
    try:
        found = relative_range(which, unit, today)  # type: ignore[arg-type]
    except OverflowError:
        return  # at the calendar's ends
    assert found.start <= found.end
    if which == "this":
        assert found.start <= today <= found.end
    elif which == "next":
        assert found.start > today
    else:
        assert found.end < today
    if unit == "week":
        assert found.start.weekday() == 0 and (found.end - found.start).days == 6
    else:
        assert found.start.day == 1 and (found.end + dt.timedelta(days=1)).day == 1


@settings(max_examples=200, deadline=None)
@given(days, days)
def test_iso_pair_is_the_range_between(a: dt.date, b: dt.date) -> None:
    found = parse_date_range(f"{a.isoformat()} {b.isoformat()}", WEDNESDAY)
    if a.year < 1000 or b.year < 1000:
        return  # not four-digit years: no ISO date
    assert found == DateRange.between(a, b)
