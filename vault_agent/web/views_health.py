"""Health (`/`): is the index fresh and complete, how far has embedding got, and which
files did it pass over, and why. Also the page's static files.

Counts, freshness and the embedding progress come from `status` (`query.status.index_status`,
verbose: the page is the owner's, like the CLI's local `status --verbose`); the files from
`query.missing.missing_files`, one page at a time.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from vault_agent.api.invoke import to_jsonable
from vault_agent.errors import IndexNotFound, VaultAgentError
from vault_agent.query.missing import MISSING_LIMIT_DEFAULT, missing_files
from vault_agent.query.status import index_status
from vault_agent.web.page import Page
from vault_agent.web.session import Session

# Details of embedding progress, whatever their names (camelCase on the wire): embedded…,
# semantic…, an ETA (`eta…`/`…Eta…`, not the `eta` inside `metadata`).
EMBED_KEY = re.compile(r"[Ee]mbed|[Ss]emantic|^eta|Eta")


def embedding_items(details: dict[str, Any]) -> list[tuple[str, Any]]:
    """The `status --verbose` details about embeddings, known or added later (shown as they come)."""
    return [(k, v) for k, v in details.items() if EMBED_KEY.search(k)]


def _health(page: Page, cursor: str | None) -> dict[str, Any]:
    ctx = page.ctx
    try:
        status = index_status(ctx.settings, verbose=True, reader=ctx.reader, recheck=False)
    except IndexNotFound as exc:
        return {"status": None, "problem": exc, "missing": None, "warnings": []}
    data = to_jsonable(status.data)
    details = data.pop("details", None) or {}
    missing = to_jsonable(missing_files(ctx.reader, cursor, MISSING_LIMIT_DEFAULT, ctx.snapshot_cache).data)
    return {
        "status": data,
        "details": details,
        "embedding": embedding_items(details),
        "problem": None,
        "missing": missing,
        "warnings": [w.model_dump() for w in status.warnings],
    }


async def health(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    try:
        values = await page.call(_health, page, request.query.get("missing"))
    except VaultAgentError as exc:  # e.g. INDEX_INCOMPATIBLE: the page says what to run
        values = {"status": None, "problem": exc, "missing": None, "warnings": []}
    return page.page_html(
        request,
        session,
        "health.html",
        view="health",
        parts=("summary", "missing"),
        request_cursor=request.query.get("missing"),
        **values,
    )


def static_handler(page: Page) -> Any:
    async def static(request: web.Request) -> web.StreamResponse:
        asset = page.assets.get(request.match_info["name"])
        if asset is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=asset.body,
            content_type=asset.content_type,
            # versioned URLs (render.asset): a new file gets a new address
            headers={"Cache-Control": "public, max-age=31536000, immutable"},
        )

    return static
