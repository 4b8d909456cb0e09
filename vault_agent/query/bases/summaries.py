"""Summaries of a column over the rows a view shows ("Bases syntax", "Table view").

The default summaries, by name as the `.base` file writes them:

    Average Min Max Sum Median Stddev   numbers (other values are skipped); none: null
    Range                               Max − Min of numbers; of dates (when the column holds
                                        no numbers): Latest − Earliest, a duration
    Earliest Latest                     dates
    Checked Unchecked                   how many values are true / false
    Empty Filled                        how many are empty (null, "", [], {}) / not
    Unique                              how many distinct values (by equality of their JSON)

`Stddev` is the population standard deviation, as `list.stddev()`. A custom summary (the
base's `summaries`) is an expression evaluated with `values`, the column's values, bound.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable

from vault_agent.query.bases import dates
from vault_agent.query.bases.values import DateValue, Value
from vault_agent.query.bases.wire_values import is_empty, to_wire


def _numbers(values: list[Value]) -> list[float]:
    return [v for v in values if isinstance(v, float) and not isinstance(v, bool) and not math.isnan(v)]


def _dates(values: list[Value]) -> list[DateValue]:
    return [v for v in values if isinstance(v, DateValue)]


def _average(values: list[Value]) -> Value:
    numbers = _numbers(values)
    return math.fsum(numbers) / len(numbers) if numbers else None


def _min(values: list[Value]) -> Value:
    numbers = _numbers(values)
    return min(numbers) if numbers else None


def _max(values: list[Value]) -> Value:
    numbers = _numbers(values)
    return max(numbers) if numbers else None


def _sum(values: list[Value]) -> Value:
    return math.fsum(_numbers(values))


def _median(values: list[Value]) -> Value:
    numbers = _numbers(values)
    return float(statistics.median(numbers)) if numbers else None


def _stddev(values: list[Value]) -> Value:
    numbers = _numbers(values)
    return float(statistics.pstdev(numbers)) if numbers else None


def _earliest(values: list[Value]) -> Value:
    found = _dates(values)
    return min(found, key=lambda d: d.moment) if found else None


def _latest(values: list[Value]) -> Value:
    found = _dates(values)
    return max(found, key=lambda d: d.moment) if found else None


def _range(values: list[Value]) -> Value:
    numbers = _numbers(values)
    if numbers:
        return max(numbers) - min(numbers)
    first, last = _earliest(values), _latest(values)
    if isinstance(first, DateValue) and isinstance(last, DateValue):
        return dates.between(last, first)
    return None


def _unique(values: list[Value]) -> Value:
    cut = [False]
    seen = {json.dumps(to_wire(v, cut), sort_keys=True, default=str) for v in values if not is_empty(v)}
    return float(len(seen))


DEFAULT_SUMMARIES: dict[str, Callable[[list[Value]], Value]] = {
    "Average": _average,
    "Min": _min,
    "Max": _max,
    "Sum": _sum,
    "Range": _range,
    "Median": _median,
    "Stddev": _stddev,
    "Earliest": _earliest,
    "Latest": _latest,
    "Checked": lambda values: float(sum(1 for v in values if v is True)),
    "Unchecked": lambda values: float(sum(1 for v in values if v is False)),
    "Empty": lambda values: float(sum(1 for v in values if is_empty(v))),
    "Filled": lambda values: float(sum(1 for v in values if not is_empty(v))),
    "Unique": _unique,
}
