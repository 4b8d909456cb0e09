"""Values as plain JSON for golden files and assertions (tests only)."""

from __future__ import annotations

from typing import Any

from vault_agent.query.bases.values import (
    DateValue,
    DisplayValue,
    DurationValue,
    FileValue,
    LinkValue,
    RegexValue,
    TagText,
    Value,
    date_text,
)


def plain(value: Value) -> Any:
    """A JSON-ready form: numbers as int when whole, typed values as one-key objects."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, TagText):
        return {"tag": str(value)}
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, DateValue):
        return {"datetime" if value.has_time else "date": date_text(value)}
    if isinstance(value, DurationValue):
        return {"duration_ms": plain(value.total_ms())}
    if isinstance(value, LinkValue):
        return {"link": value.target, "path": value.path, "display": plain(value.display)}
    if isinstance(value, FileValue):
        return {"file": value.info.path}
    if isinstance(value, RegexValue):
        return {"regex": f"/{value.source}/{value.flags}"}
    assert isinstance(value, DisplayValue)
    return {value.kind: value.text}
