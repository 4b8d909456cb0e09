"""What the renderers share."""

from __future__ import annotations

from typing import Any


def data_of(body: Any) -> dict[str, Any]:
    """The `data` object of a response body (the body itself for raw contracts), for renderers."""
    data = body.get("data", body) if isinstance(body, dict) else {}
    return data if isinstance(data, dict) else {}
