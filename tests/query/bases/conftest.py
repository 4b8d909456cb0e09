"""Fixtures of the Bases tests: local time is UTC in every module (dates print in local time)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def utc() -> Iterator[None]:
    """Local time is UTC while the module runs (Bases prints dates in local time)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()
