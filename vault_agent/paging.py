"""Offset cursors of paged answers: the `next_cursor` a page returns is the count of items
already given, as a decimal string; anything else is not one of ours."""

from __future__ import annotations

from vault_agent.errors import InvalidParameter


def offset_of(cursor: str | None) -> int:
    """The offset a `next_cursor` stands for (0 without one).

    Raises:
        InvalidParameter: not a cursor this server gave.
    """
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 9:
        raise InvalidParameter("cursor must be the next_cursor of a previous answer")
    return int(cursor)
