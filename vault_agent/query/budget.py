"""A wall-clock budget for a search: partial results instead of an unbounded wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

T = TypeVar("T")


class Budget:
    """A wall-clock deadline; DuckDB queries are interrupted when it passes."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.hit = False

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def over(self) -> bool:
        if self.left() <= 0:
            self.hit = True
        return self.hit

    def run(self, con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """Run a query, interrupting it at the deadline (then: no rows, budget marked hit)."""
        rows = self._interruptible(con, lambda: con.execute(sql, params).fetchall())
        return [] if rows is None else rows

    def run_arrow(self, con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> pa.Table | None:
        """`run` with the rows as an Arrow table (None instead of no rows at the deadline)."""
        return self._interruptible(con, lambda: con.sql(sql, params=params).to_arrow_table())

    def _interruptible(self, con: duckdb.DuckDBPyConnection, query: Callable[[], T]) -> T | None:
        """`query()` with `con` interrupted at the deadline (then None, budget marked hit)."""
        left = self.left()
        if left <= 0:
            self.hit = True
            return None
        timer = threading.Timer(left, con.interrupt)
        timer.start()
        try:
            return query()
        except duckdb.InterruptException:
            self.hit = True
            return None
        finally:
            timer.cancel()
