"""Pages of a listing: opaque cursors and a character budget per answer (issue 23).

A listing that can grow with the vault (vault_search's lines, vault_ls's entries,
get_conversation's records and entries) answers one page: at most `limit` items and at
most a budget of characters of JSON, whichever comes first, with `next_cursor` when more
follow. A cursor names the last item returned (its sort key), not an offset, so a page
that follows a change in the vault neither repeats nor skips what stayed in place. It is
opaque to callers (base64url of a small JSON array) and checked when it comes back.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from vault_agent.errors import bad_cursor

T = TypeVar("T")
MAX_CURSOR_CHARS = 8_192  # a cursor holds one path (at most 4,096 characters) and a number


def encode_cursor(*key: str | int) -> str:
    """The cursor of the item whose sort key is `key`."""
    text = json.dumps(list(key), ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, shape: Sequence[type]) -> tuple[Any, ...]:
    """The sort key a cursor names, checked against `shape` (e.g. `(str, int)`).

    Raises:
        InvalidParameter: not a cursor of this listing.
    """
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError(cursor)
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise bad_cursor() from None
    ok = (
        isinstance(key, list)
        and len(key) == len(shape)
        and all(
            isinstance(v, t) and not (t is int and isinstance(v, bool))
            for v, t in zip(key, shape, strict=True)
        )
    )
    if not ok:
        raise bad_cursor()
    return tuple(key)


def json_chars(value: Any) -> int:
    """Characters of a value as the answer serializes it (compact JSON, UTF-8 kept)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def fit(items: Sequence[T], max_chars: int, size: Callable[[T], int]) -> int:
    """How many leading items fit in `max_chars` (always at least one, so a page moves on)."""
    used = 0
    for count, item in enumerate(items):
        used += size(item) + 1  # the comma between items
        if used > max_chars and count > 0:
            return count
    return len(items)


def offset_of(cursor: str | None) -> int:
    """The offset an offset cursor stands for (0 without one): listings whose order does not
    move under a change (a conversation's pages, the web page's lists) give the count of
    items already returned, as a decimal string.

    Raises:
        InvalidParameter: not a cursor this server gave.
    """
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 9:
        raise bad_cursor()
    return int(cursor)
