"""How task dates are held as numbers, shared by the task columns and the query language.

Dates are day numbers since 1970-01-01; a field that is absent is `MISSING` (larger than any
date) and one written but no calendar date is `INVALID` (smaller than any): the plugin's date
order (invalid first, then by date, absent last) is then plain integer order.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

MISSING = np.int32(2**31 - 1)
INVALID = np.int32(-(2**31))
EPOCH = dt.date(1970, 1, 1)


def day_number(day: dt.date) -> int:
    """A date as the columns hold it."""
    return (day - EPOCH).days
