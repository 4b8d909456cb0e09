"""Signing in and out of the page, and the API route that makes a one-time sign-in link.

- `POST /sign-in/link` (an API route: the bearer token, like every API route) answers
  `{"data": {"url", "expires_in_seconds"}, "warnings": []}`: the link `vault-agent web`
  prints and opens. Its address is the one the caller reached the server by (the Host
  header, already checked against this server's names), so the browser gets the cookie for
  the same origin.
- `GET /sign-in?once=NONCE` (the page, no session needed) spends the nonce, sets the session
  cookie and redirects to `/`, so the nonce leaves the address bar. A link opened twice,
  late, or not issued by this server process gets the sign-in page saying which, and the
  command that makes a new one.
- `POST /ui/sign-out` deletes the cookie in this browser.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from vault_agent.api.invoke import dump_json
from vault_agent.web.page import NO_STORE, Page, see_other
from vault_agent.web.session import Session
from vault_agent.web.sign_in_links import LINK_TTL_S, LinkState

SIGN_IN_PATH = "/sign-in"
LINK_PATH = "/sign-in/link"


def _prefetch(request: web.Request) -> bool:
    """A browser's speculative fetch (typed-address prefetch): must not spend the nonce."""
    purpose = f"{request.headers.get('Sec-Purpose', '')} {request.headers.get('Purpose', '')}"
    return "prefetch" in purpose.lower()


async def sign_in(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    """Trade a one-time link's nonce for the session cookie, then go to a clean address."""
    if _prefetch(request):
        return web.Response(status=503, headers={"Cache-Control": NO_STORE})
    nonce = request.query.get("once", "")
    state = page.links.redeem(nonce) if nonce else LinkState.UNKNOWN
    if state is not LinkState.OK:
        return page.sign_in_page(request, status=401, reason=state.value)
    response = see_other("/")
    page.sign_in(response)
    return response


async def sign_out(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    response = see_other("/")
    page.sign_out(response)
    return response


def link_handler(page: Page) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The `POST /sign-in/link` handler of this page (behind the API's bearer-token check)."""

    async def sign_in_link(request: web.Request) -> web.StreamResponse:
        host = request.headers.get("Host", "")  # access_checks let only this server's names through
        url = f"{request.scheme}://{host}{SIGN_IN_PATH}?once={page.links.issue()}"
        body = {"data": {"url": url, "expires_in_seconds": LINK_TTL_S}, "warnings": []}
        return web.Response(
            text=dump_json(body), content_type="application/json", headers={"Cache-Control": NO_STORE}
        )

    return sign_in_link
