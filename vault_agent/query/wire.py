"""Pieces of the seed 002 exploration payloads: the wire base, line ranges, next actions.

Seed 002's payloads are snake_case on every surface (names on the wire = Python names).
Numbers that are ratios are rounded to 6 decimals so answers are byte-stable.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vault_agent.query.limits import SCAN_DEFAULT_CHUNK_LINES

RATIO_DIGITS = 6


def iso_seconds(mtime_ns: int) -> str:
    """A file time as ISO 8601 UTC to the second, e.g. `2026-01-05T10:00:00Z`."""
    return dt.datetime.fromtimestamp(mtime_ns // 1_000_000_000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ratio(value: float) -> float:
    """A ratio rounded for byte-stable output."""
    return round(float(value), RATIO_DIGITS)


class Wire(BaseModel):
    """Base of seed 002 payloads: snake_case on the wire, unknown fields refused."""

    model_config = ConfigDict(extra="forbid")


class LineRange(Wire):
    start_line: int
    end_line: int


class NextAction(Wire):
    """One proposal of seed 002: the tool to call next and its minimal parameters."""

    type: str
    confidence: float | None
    params: dict[str, Any] | None


def omit_none() -> Any:
    """A field default that disappears from the wire while it is None."""
    return Field(default=None, exclude_if=lambda v: v is None)


def action(kind: str, confidence: float | None, params: dict[str, Any] | None = None) -> NextAction:
    return NextAction(type=kind, confidence=None if confidence is None else ratio(confidence), params=params)


def stop(confidence: float = 1.0) -> NextAction:
    return action("stop", confidence, None)


def scan_params(path: str, gap: tuple[int, int] | None) -> dict[str, Any]:
    """Minimal vault_scan params: the path, plus the cursor and size of a gap to fill."""
    params: dict[str, Any] = {"path": path}
    if gap is None:
        return params
    if gap[0] != 1:
        params["cursor"] = {"start_line": gap[0]}
    size = gap[1] - gap[0] + 1
    if size < SCAN_DEFAULT_CHUNK_LINES:
        params["chunk_lines"] = size
    return params
