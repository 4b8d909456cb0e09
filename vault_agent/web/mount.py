"""Mount the owner's web page on the server's aiohttp application (called by `server.http_server`).

Routes (all behind the server's Host/Origin checks; GETs need the session cookie, POSTs
also a same-origin `Origin` and the CSRF token; see `web.page`):

| route | view |
| --- | --- |
| `GET /` (`?token=` signs in) | health |
| `POST /ui/sign-in`, `POST /ui/sign-out` | the token pasted by hand; signing out |
| `GET /ui/search`, `GET /ui/note` | search with explain; a note's outline and one section |
| `GET /ui/conversations`, `GET /ui/conversations/{id}` | conversations, one conversation |
| `POST /ui/conversations/{id}/reply`, `POST /ui/conversations/{id}/end` | answer, end |
| `GET`/`POST /ui/conversations/{id}/undo` | the dry run; the confirmed undo |
| `GET /ui/events` | the live stream (status, messages, questions, replies) |
| `GET /ui/static/{name}` | the page's own script, style sheet and icon (no session needed) |
"""

from __future__ import annotations

import functools
from urllib.parse import quote

from aiohttp import web

from vault_agent.api.http import PAGE_KEY
from vault_agent.api.operation import AppContext
from vault_agent.api.security import AccessPolicy
from vault_agent.web import views_conversations as talk
from vault_agent.web.events import events
from vault_agent.web.page import Page, add_security_headers
from vault_agent.web.views_health import health, sign_in, sign_out, static_handler
from vault_agent.web.views_search import note, search

UI = "/ui"


def mount_web_page(app: web.Application, ctx: AppContext, policy: AccessPolicy) -> Page:
    """Add the page's routes and headers to `app`; the API's bearer-token routes are untouched."""
    page = Page(ctx, policy)
    page.add(app, "GET", "/", health)
    page.add(app, "POST", f"{UI}/sign-in", sign_in, change=True, public=True)
    page.add(app, "POST", f"{UI}/sign-out", sign_out, change=True)
    page.add(app, "GET", f"{UI}/search", search)
    page.add(app, "GET", f"{UI}/note", note)
    page.add(app, "GET", f"{UI}/conversations", talk.conversations)
    page.add(app, "GET", f"{UI}/conversations/{{id}}", talk.conversation)
    page.add(app, "POST", f"{UI}/conversations/{{id}}/reply", talk.reply, change=True)
    page.add(app, "POST", f"{UI}/conversations/{{id}}/end", talk.end, change=True)
    page.add(app, "GET", f"{UI}/conversations/{{id}}/undo", talk.undo_preview)
    page.add(app, "POST", f"{UI}/conversations/{{id}}/undo", talk.undo_apply, change=True)
    page.add(app, "GET", f"{UI}/events", events)
    page.add_handler(app, f"{UI}/static/{{name}}", static_handler(page))
    app[PAGE_KEY] = page
    app.on_response_prepare.append(functools.partial(add_security_headers, page))
    return page


def sign_in_url(server_url: str, token: str) -> str:
    """What `serve` prints: the page's address with the token that signs a browser in."""
    return f"{server_url}/?token={quote(token, safe='')}"
