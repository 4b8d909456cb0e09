"""A `vault_query` request, its answer, and the page cursor that ties the two: a cursor
names the offset, the query it belongs to (a fingerprint of the filters or DQL, without the
page) and the snapshot of the page before it (run.py warns when the next page's differs).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vault_agent.errors import InvalidParameter
from vault_agent.query.structured.filters import Filters

MAX_CURSOR_CHARS = 200


class QueryResult(BaseModel):
    path: str
    title: str
    tags: list[str]
    mtime: str
    properties: dict[str, Any]


class QueryData(BaseModel):
    """SPEC's answer: `{results, total, next_cursor, indexFreshness}`."""

    model_config = ConfigDict(populate_by_name=True)

    results: list[QueryResult]
    total: int | None  # every match (DQL: at most its LIMIT); null when the budget ran out first
    next_cursor: str | None
    index_freshness: str = Field(alias="indexFreshness")


@dataclass(frozen=True)
class QueryRequest:
    filters: Filters
    dql: str | None = None
    limit: int | None = None
    cursor: str | None = None

    def fingerprint(self) -> str:
        """What a cursor belongs to: the query without its page (limit, cursor)."""
        f = self.filters
        raw = [self.dql, f.tags, f.any_tags, [(w.field, w.op, w.value) for w in f.where], f.folder, f.glob,
               f.modified_after, f.modified_before, f.created_after, f.created_before, f.links_to,
               f.linked_from, f.sort, f.select]  # fmt: skip
        text = json.dumps(raw, ensure_ascii=False, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_cursor(offset: int, fingerprint: str, snapshot_id: int) -> str:
    """The cursor of the page that starts at `offset`, for this query and snapshot."""
    raw = f"{offset}:{fingerprint}:{snapshot_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, fingerprint: str) -> tuple[int, int | None]:
    """(offset, snapshot id of the previous page) of a cursor (0, None without one).

    Raises:
        InvalidParameter: a cursor that is malformed or belongs to another query.
    """
    if cursor is None or cursor == "":
        return 0, None
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        offset_s, owner, snap_s = text.split(":")
        offset, snapshot_id = int(offset_s), int(snap_s)
        if offset < 0:
            raise ValueError
    except (ValueError, UnicodeDecodeError):
        raise InvalidParameter.about(
            "cursor", "is not a cursor of vault_query; use next_cursor as given"
        ) from None
    if owner != fingerprint:
        raise InvalidParameter.about(
            "cursor", "belongs to another query; repeat the same filters or dql with it"
        )
    return offset, snapshot_id
