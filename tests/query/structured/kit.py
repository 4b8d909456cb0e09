"""Vaults, snapshots and calls shared by the vault_query tests.

Snapshots are built by the real indexer (`build_index`) into `tmp_path`; file times are set
with `os.utime` so that date filters have fixed answers; the clock is fixed (tests never
read the wall clock).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.contracts import Outcome
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.filters import Filters, WhereItem
from vault_agent.query.structured.run import QueryData, QueryRequest, vault_query

REPO = Path(__file__).resolve().parents[3]
NOW = dt.datetime(2024, 5, 15, 12, 0, tzinfo=dt.UTC)


def clock() -> dt.datetime:
    return NOW


def iso_ns(text: str) -> int:
    """An ISO UTC time as ns since the epoch (for os.utime)."""
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp()) * 1_000_000_000


# fixtures/query: each note's mtime (the rest: 2024-01-01 plus one day per note, path order).
QUERY_FIXTURE_MTIMES = {
    "Daily/2024-05-14.md": "2024-05-14T20:00:00Z",
    "Daily/2024-05-15.md": "2024-05-15T09:00:00Z",
    "Projects/Gamma.md": "2024-05-15T11:00:00Z",
    "Projects/Alpha.md": "2024-05-10T08:00:00Z",
    "Projects/Beta.md": "2024-04-01T08:00:00Z",
}


def set_mtimes(vault: Path, mtimes: dict[str, str]) -> None:
    """Every note's mtime: from `mtimes`, else 2024-01-01 plus a day per note in path order."""
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    for i, rel in enumerate(notes):
        when = mtimes.get(rel) or (base + dt.timedelta(days=i)).isoformat()
        ns = iso_ns(when)
        os.utime(vault / rel, ns=(ns, ns))


def index_vault(vault: Path, state: Path) -> Settings:
    settings = Settings(vault=vault, index_dir=state)
    build_index(settings, full=True)
    return settings


def copy_fixture(tmp: Path, name: str = "query") -> Settings:
    """fixtures/<name> copied into `tmp`, its mtimes fixed, indexed."""
    vault = tmp / name
    shutil.copytree(REPO / "fixtures" / name, vault)
    set_mtimes(vault, QUERY_FIXTURE_MTIMES if name == "query" else {})
    return index_vault(vault, tmp / f"{name}-state")


@contextmanager
def opened(settings: Settings) -> Iterator[AppContext]:
    """An AppContext over the settings' snapshot (freshness pinned, fixed clock)."""
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    try:
        yield AppContext(settings=settings, vault=vault_for_settings(settings), reader=reader, clock=clock)
    finally:
        reader.close()


def request(**kw: Any) -> QueryRequest:
    """A QueryRequest from vault_query's parameter names."""
    dql, limit, cursor = kw.pop("dql", None), kw.pop("limit", None), kw.pop("cursor", None)
    kw["where"] = tuple(WhereItem(w["field"], w["op"], w.get("value")) for w in kw.get("where") or ())
    for key in ("tags", "any_tags", "select"):
        kw[key] = tuple(kw.get(key) or ())
    return QueryRequest(Filters(**kw), dql=dql, limit=limit, cursor=cursor)


def query(ctx: AppContext, **kw: Any) -> Outcome[QueryData]:
    return vault_query(ctx.reader, request(**kw), cache=ctx.snapshot_cache, clock=clock)


def paths(ctx: AppContext, **kw: Any) -> list[str]:
    return [r.path for r in query(ctx, **kw).data.results]


def all_pages(ctx: AppContext, page: int, **kw: Any) -> tuple[list[str], int | None]:
    """Every result path, page by page through next_cursor; and the total of the first page."""
    out: list[str] = []
    cursor = None
    total = None
    for _ in range(10_000):
        data = query(ctx, limit=page, cursor=cursor, **kw).data
        total = data.total if total is None else total
        out += [r.path for r in data.results]
        cursor = data.next_cursor
        if cursor is None:
            return out, total
    raise AssertionError("paging did not end")


def call(ctx: AppContext, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The body an operation answers through `invoke` (as every transport does)."""

    return body_of(CATALOG.named(name), invoke(CATALOG.named(name), ctx, params))
