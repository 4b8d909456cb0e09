"""Search (`/ui/search`).

Search passes the page's inputs to the `search` operation as they are: its own parameter
model validates them, so the page offers exactly what the operation accepts. The filter
inputs (`tags`, `folder`, `modified_after`, `modified_before`, SPEC "Structured queries")
and `explain` appear when the operation has those parameters, and each hit's `explain`
object is shown field by field, whatever fields it holds. Snippets mark the words the
query matched as the engine matches them, never stop words (`query.match_terms`).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from multidict import MultiDict

from vault_agent.api.http_invoke import params_from_query
from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import Operation
from vault_agent.api.ops import retrieval
from vault_agent.query.match_terms import query_stems
from vault_agent.web.page import Page
from vault_agent.web.session import Session

FILTERS = ("tags", "folder", "modified_after", "modified_before")  # SPEC names, shown when accepted
PAGE_INPUTS = ("q", "mode", "group", "limit", *FILTERS)
RESULTS_LIMIT = "20"


def accepted(op: Operation) -> set[str]:
    """Parameter names (and aliases) the operation's model takes."""
    names = set(op.params.model_fields)
    names |= {f.alias for f in op.params.model_fields.values() if f.alias}
    return names


def search_params(op: Operation, query: MultiDict[str] | Any) -> MultiDict[str]:
    """The page's inputs the operation accepts, blanks dropped; tags split on commas."""
    takes = accepted(op)
    out: MultiDict[str] = MultiDict()
    for key in PAGE_INPUTS:
        if key not in takes:
            continue
        for value in query.getall(key, []):
            if key == "tags":
                out.extend(("tags", tag) for tag in (t.strip() for t in value.split(",")) if tag)
            elif value.strip():
                out.add(key, value.strip())
    if "limit" not in out:
        out["limit"] = RESULTS_LIMIT
    if "explain" in takes:
        out["explain"] = "true"
    return out


def _search(page: Page, query: MultiDict[str]) -> dict[str, Any]:
    outcome = invoke(retrieval.SEARCH, page.ctx, params_from_query(retrieval.SEARCH.params, query))
    return body_of(retrieval.SEARCH, outcome)


async def search(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    takes = accepted(retrieval.SEARCH)
    q = request.query.get("q", "")
    values: dict[str, Any] = {
        "q": q,
        "mode": request.query.get("mode", ""),
        "group": request.query.get("group", ""),
        "filters": [(name, request.query.get(name, "")) for name in FILTERS if name in takes],
        "explains": "explain" in takes,
        "body": None,
        "terms": query_stems(q),
    }
    if q.strip():
        values["body"] = await page.call(_search, page, search_params(retrieval.SEARCH, request.query))
    return page.page_html(request, session, "search.html", view="search", parts=("results",), **values)
