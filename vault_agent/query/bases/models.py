"""`vault_base`'s request and answer (SPEC "Bases"; docs/bases.md).

One answer shape for the three calls, each filling its part (absent fields are omitted):

- no `path`: `bases` (the vault's bases with their views), `total`, `next_cursor`;
- a `path` alone: `base` (its views, the notes embedding it);
- `path` and `view`: `base`, `view`, `this`, `columns`, `rows` (one page), `groups` (those
  the page's rows belong to), `summaries`, `total` (rows the view shows), `next_cursor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vault_agent.query.wire import omit_none

LIMIT_DEFAULT = 50
LIMIT_MAX = 500
MAX_PATH_CHARS = 4_096
MAX_VIEW_CHARS = MAX_PATH_CHARS  # a view name (or index): the parameters share one bound


@dataclass(frozen=True)
class BaseRequest:
    path: str | None = None
    view: str | int | None = None
    this: str | None = None
    limit: int | None = None
    cursor: str | None = None


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class ViewInfo(_Model):
    index: int
    name: str
    type: str
    runs: bool  # table, cards and list views run; map and plugin views are refused


class EmbedInfo(_Model):
    note: str
    view: str | None = omit_none()


class BaseInfo(_Model):
    path: str  # a `.base` file, or `Note.md#N` for a base block
    kind: Literal["file", "block"]
    views: list[ViewInfo] | None = omit_none()
    view_count: int | None = omit_none()  # how many views the base holds, when more are than listed
    error: str | None = omit_none()  # why the base cannot be read (its YAML, its size)
    embeds: list[EmbedInfo] | None = omit_none()  # notes embedding it (`this` = that note)
    embed_count: int | None = omit_none()


class ColumnInfo(_Model):
    id: str  # the view's `order` entry: `file.name`, `author`, `formula.ppu`
    name: str  # its display name


class RowInfo(_Model):
    path: str
    group: int | None = omit_none()  # the index of its group in `groups`
    values: dict[str, Any]  # column id → value


class GroupInfo(_Model):
    index: int
    value: Any
    count: int
    summaries: dict[str, Any] | None = omit_none()


class BaseData(_Model):
    bases: list[BaseInfo] | None = omit_none()
    base: BaseInfo | None = omit_none()
    view: ViewInfo | None = omit_none()
    this: str | None = omit_none()
    columns: list[ColumnInfo] | None = omit_none()
    rows: list[RowInfo] | None = omit_none()
    groups: list[GroupInfo] | None = omit_none()
    summaries: dict[str, Any] | None = omit_none()
    total: int | None = omit_none()
    next_cursor: str | None = omit_none()
    index_freshness: str = Field(alias="indexFreshness")
