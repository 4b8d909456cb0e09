"""A wall-clock budget for a search: partial results instead of an unbounded wait."""

from __future__ import annotations

import threading
import time
from typing import Any

import duckdb
import pyarrow as pa


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
        left = self.left()
        if left <= 0:
            self.hit = True
            return []
        timer = threading.Timer(left, con.interrupt)
        timer.start()
        try:
            return con.execute(sql, params).fetchall()
        except duckdb.InterruptException:
            self.hit = True
            return []
        finally:
            timer.cancel()

    def run_arrow(self, con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> pa.Table | None:
        """`run` with the rows as an Arrow table (None instead of no rows at the deadline)."""
        left = self.left()
        if left <= 0:
            self.hit = True
            return None
        timer = threading.Timer(left, con.interrupt)
        timer.start()
        try:
            return con.sql(sql, params=params).to_arrow_table()
        except duckdb.InterruptException:
            self.hit = True
            return None
        finally:
            timer.cancel()
