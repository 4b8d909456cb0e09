"""Mount the owner's web page on the server's aiohttp application (called by `server.http_server`).

Routes (all behind the server's Host/Origin checks; GETs need the session cookie, POSTs
also a same-origin `Origin` and the CSRF token; see `web.page`):

| route | view |
| --- | --- |
| `GET /` | health |
| `GET /sign-in?once=…`, `POST /ui/sign-out` | a one-time link signs a browser in; signing out |
| `GET /ui/search`, `GET /ui/note` | search with explain; a note's outline and one section |
| `GET /ui/conversations`, `GET /ui/conversations/{id}` | conversations, one conversation |
| `POST /ui/conversations/{id}/reply`, `POST /ui/conversations/{id}/end` | answer, end |
| `GET`/`POST /ui/conversations/{id}/undo` | the dry run; the confirmed undo |
| `GET /ui/events` | the live stream (status, messages, questions, replies) |
| `GET /ui/static/{name}` | the page's own script, style sheet and icon (no session needed) |

Beside them one API route (bearer token, not the cookie): `POST /sign-in/link`, the
one-time sign-in link that `vault-agent web` prints and opens (`web.views_sign_in`).
"""

from __future__ import annotations

import functools

from aiohttp import web

from vault_agent.api.http import PAGE_KEY
from vault_agent.api.operation import AppContext
from vault_agent.api.security import AccessPolicy
from vault_agent.web import views_conversations as talk
from vault_agent.web.events import events
from vault_agent.web.page import Page, add_security_headers
from vault_agent.web.views_health import health, static_handler
from vault_agent.web.views_note import note
from vault_agent.web.views_search import search
from vault_agent.web.views_sign_in import LINK_PATH, SIGN_IN_PATH, link_handler, sign_in, sign_out

UI = "/ui"


def mount_web_page(app: web.Application, ctx: AppContext, policy: AccessPolicy) -> Page:
    """Add the page's routes and headers to `app`; the API's bearer-token routes are untouched."""
    page = Page(ctx, policy)
    page.add(app, "GET", "/", health)
    page.add(app, "GET", SIGN_IN_PATH, sign_in, public=True)
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
    app.router.add_post(LINK_PATH, link_handler(page))  # an API route: the bearer token's checks
    app[PAGE_KEY] = page
    app.on_response_prepare.append(functools.partial(add_security_headers, page))
    return page
