"""Bases (`/ui/bases`): the vault's bases and their views, and one view run as a table.

Every answer is the `base` operation's (`vault_base`, the same call every surface makes):
without `path` the vault's bases with their views (paged); with `path` a base's views, and
its view `view` (else the first one that runs) as a table: the columns in the view's
`order`, its rows one page at a time, grouped by its `groupBy` with each group's summaries,
and the view's summaries at the foot. Each row links to its note's view. Values are shown
as text (lists joined, objects as JSON), each cut to CELL_CHARS: the page stays small.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.ops import bases
from vault_agent.web.page import Page
from vault_agent.web.session import Session

LIST_PAGE = 50  # bases per page of the listing
ROWS_PAGE = 50  # rows per page of a view
CELL_CHARS = 160  # a value as a cell shows it (the note holds the rest)
NAME_COLUMNS = ("file.name", "file.path", "file.basename")  # a cell of these links to the note


def cell(value: Any) -> str:
    """A value of the wire (SPEC "Bases" values) as a cell's text, at most CELL_CHARS."""
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list):
        text = ", ".join(cell(v) for v in value)
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = str(value)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


@dataclass(frozen=True)
class Table:
    """A view's answer laid out for the page: columns, groups of rows, summaries."""

    columns: list[dict[str, Any]]
    link_column: str | None  # the column whose cells link to the note; None: a leading link
    groups: list[dict[str, Any]]  # {value, count, summaries, rows}; one unnamed group without groupBy
    summaries: list[str] | None  # the view's, by column (None: it has none)
    grouped: bool


def summary_cells(columns: list[dict[str, Any]], summaries: dict[str, Any] | None) -> list[str] | None:
    """Summaries by column, in the columns' order (an empty cell where a column has none)."""
    if not summaries:
        return None
    return [cell(summaries.get(c["id"])) if c["id"] in summaries else "" for c in columns]


def table(data: dict[str, Any]) -> Table:
    """Lay out one page of a view's rows: in order, under the group each belongs to."""
    columns: list[dict[str, Any]] = data.get("columns") or []
    ids = [c["id"] for c in columns]
    link_column = next((i for i in NAME_COLUMNS if i in ids), None)
    known = {g["index"]: g for g in data.get("groups") or []}
    groups: list[dict[str, Any]] = []
    for row in data.get("rows") or []:
        index = row.get("group")
        if not groups or groups[-1]["index"] != index:
            group = known.get(index, {})
            groups.append(
                {
                    "index": index,
                    "value": cell(group.get("value")) if index is not None else None,
                    "count": group.get("count"),
                    "summaries": summary_cells(columns, group.get("summaries")),
                    "rows": [],
                }
            )
        values = row.get("values") or {}
        groups[-1]["rows"].append({"path": row["path"], "cells": [cell(values.get(i)) for i in ids]})
    return Table(
        columns=columns,
        link_column=link_column,
        groups=groups,
        summaries=summary_cells(columns, data.get("summaries")),
        grouped=bool(known),
    )


@dataclass(frozen=True)
class BasesWant:
    """What the view was asked: a base (`path`), its view (name or index), a page (`cursor`)."""

    path: str
    view: str
    cursor: str | None


def _run(page: Page, raw: dict[str, Any]) -> dict[str, Any]:
    return body_of(bases.BASE, invoke(bases.BASE, page.ctx, raw))


def _bases(page: Page, want: BasesWant) -> dict[str, Any]:
    if not want.path:
        listing = _run(page, {"limit": LIST_PAGE, "cursor": want.cursor})
        return {"listing": listing, "base": None, "ran": None, "table": None}
    base = _run(page, {"path": want.path})
    views = base["data"]["base"].get("views") or []
    view = want.view or next((str(v["index"]) for v in views if v["runs"]), "")
    if not view:  # no view that runs: the base's views are listed, each with its type
        return {"listing": None, "base": base, "ran": None, "table": None}
    ran = _run(page, {"path": want.path, "view": view, "limit": ROWS_PAGE, "cursor": want.cursor})
    return {"listing": None, "base": base, "ran": ran, "table": table(ran["data"])}


async def bases_view(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    q = request.query
    want = BasesWant(
        path=q.get("path", "").strip(), view=q.get("view", "").strip(), cursor=q.get("cursor") or None
    )
    found = await page.call(_bases, page, want)
    return page.page_html(
        request, session, "bases.html", view="bases", parts=("table",), path=want.path, **found
    )
