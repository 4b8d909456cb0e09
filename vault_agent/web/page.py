"""The page's plumbing: sign-in, the checks every page route makes, headers, rendering.

Every route of the page goes through `Page.route`: no session cookie → the sign-in page
(401); a state change (POST) → same-origin `Origin` and the session's CSRF token, else
403; a `?token=` in the address → refused with the sign-in page (the bearer token never
signs a browser in: it would stay in the history; `vault-agent web` makes a one-time link,
`web.sign_in_links`).
Errors of the core (`VaultAgentError`) become an HTML page or fragment with their status
and message (the same messages every surface gives). Core functions run in worker threads,
like the API's handlers; nothing here takes the index writer.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web
from jinja2 import Environment

from vault_agent.api.operation import AppContext
from vault_agent.api.security import AccessPolicy
from vault_agent.errors import Forbidden, VaultAgentError, internal_error
from vault_agent.web.render import Asset, load_assets, make_environment
from vault_agent.web.session import CSRF_FIELD, CSRF_HEADER, PageSessions, Session, csrf_ok, same_origin
from vault_agent.web.sign_in_links import LINK_TTL_S, SignInLinks

T = TypeVar("T")
View = Callable[["Page", web.Request, Session], Awaitable[web.StreamResponse]]

# No inline script or style, nothing from another origin, never framed: a note's text
# that slipped through escaping still could not run or load anything.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form
    # posts, and the same-origin check of state changes needs the real origin.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
NO_STORE = "no-store"  # pages hold note text: never kept in a cache

log = logging.getLogger("vault_agent.web")
ANONYMOUS = Session(nonce="", expires=0, csrf="")  # a public route (signing in) run without a session
TOKEN_IN_ADDRESS = "token_in_address"  # the sign-in page's reason for an old `?token=` address


class Page:
    """The web page of one server: its context, sessions, templates and routes."""

    def __init__(self, ctx: AppContext, policy: AccessPolicy) -> None:
        self.ctx = ctx
        self.policy = policy
        self.sessions = PageSessions(policy.token, policy.ports)
        self.links = SignInLinks()  # one-time sign-in links (`vault-agent web`), in memory only
        self.assets: dict[str, Asset] = load_assets()
        self.env: Environment = make_environment(self.assets)
        self.resources: set[web.AbstractResource] = set()

    # ----- the PageRoutes protocol of api.http -------------------------------------------
    def owns(self, request: web.Request) -> bool:
        route = request.match_info.route
        return route.resource is not None and route.resource in self.resources

    def add(
        self,
        app: web.Application,
        method: str,
        path: str,
        view: View,
        *,
        change: bool = False,
        public: bool = False,
    ) -> None:
        """Mount one page route (see the module docstring for its checks)."""
        route = app.router.add_route(method, path, self.route(view, change=change, public=public))
        if route.resource is not None:
            self.resources.add(route.resource)

    def add_handler(
        self, app: web.Application, path: str, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> None:
        """Mount a GET route that needs no session (the page's own static files)."""
        route = app.router.add_get(path, handler, allow_head=False)
        if route.resource is not None:
            self.resources.add(route.resource)

    # ----- checks --------------------------------------------------------------------------
    def route(
        self, view: View, *, change: bool, public: bool
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        @functools.wraps(view)
        async def handle(request: web.Request) -> web.StreamResponse:
            session = self.sessions.verify(request.cookies.get(self.sessions.cookie_name))
            if "token" in request.query:  # never compared: no address signs in with the token
                return self.sign_in_page(request, status=401, reason=TOKEN_IN_ADDRESS)
            if change and not same_origin(
                request.headers.get("Host"), request.headers.get("Origin"), request.headers.get("Referer")
            ):
                return self.refuse(
                    request,
                    session,
                    "this change did not come from this server's own page; open the page again and retry",
                )
            if session is None and not public:
                return self.sign_in_page(request, status=401)
            if change and session is not None and not csrf_ok(session, await self._csrf_of(request)):
                return self.refuse(
                    request,
                    session,
                    "the page's security token is missing or out of date; reload the page and retry",
                )
            try:
                return await view(self, request, session or ANONYMOUS)
            except VaultAgentError as exc:
                return self.error(request, session, exc)
            except web.HTTPException:
                raise
            except Exception:  # noqa: BLE001 - logged with an incident id, never its text
                return self.error(request, session, internal_error(log, "page request failed"))

        return handle

    async def _csrf_of(self, request: web.Request) -> str | None:
        header = request.headers.get(CSRF_HEADER)
        if header:
            return header
        if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.post()
            value = form.get(CSRF_FIELD)
            return value if isinstance(value, str) else None
        return None

    def sign_in(self, response: web.StreamResponse) -> None:
        value, _ = self.sessions.issue()
        response.set_cookie(self.sessions.cookie_name, value, **self.sessions.cookie_attributes())  # type: ignore[arg-type]

    def sign_out(self, response: web.StreamResponse) -> None:
        response.del_cookie(self.sessions.cookie_name, path="/")

    # ----- responses -----------------------------------------------------------------------
    def html(self, template: str, http_status: int = 200, **values: Any) -> web.Response:
        text = self.env.get_template(template).render(**values)
        return web.Response(
            text=text,
            status=http_status,
            content_type="text/html",
            charset="utf-8",
            headers={"Cache-Control": NO_STORE},
        )

    def page_html(
        self, request: web.Request, session: Session, template: str, http_status: int = 200, **values: Any
    ) -> web.Response:
        """A whole page, or with `?part=NAME` only its fragment template `_NAME.html`."""
        part = request.query.get("part")
        if part is not None and part in values.get("parts", ()):
            return self.html(f"_{part}.html", http_status, csrf=session.csrf, **values)
        return self.html(template, http_status, csrf=session.csrf, **values)

    def sign_in_page(self, request: web.Request, status: int, reason: str = "") -> web.Response:
        """How to sign in (`vault-agent web`), and why the last try did not (`reason`: a
        `LinkState` value, or TOKEN_IN_ADDRESS)."""
        if request.query.get("part") is not None or request.path == "/ui/events":
            return web.Response(
                status=status,
                text="sign in first",
                content_type="text/plain",
                headers={"Cache-Control": NO_STORE},
            )
        return self.html(
            "signin.html",
            status,
            reason=reason,
            ttl_minutes=LINK_TTL_S // 60,
            signed_in=self.sessions.verify(request.cookies.get(self.sessions.cookie_name)) is not None,
            view="signin",
            csrf="",
        )

    def refuse(self, request: web.Request, session: Session | None, message: str) -> web.Response:
        return self.error(request, session, Forbidden(message))

    def error(self, request: web.Request, session: Session | None, exc: VaultAgentError) -> web.Response:
        if request.query.get("part") is not None:
            return self.html("_error.html", exc.http_status, error=exc)
        return self.html(
            "error.html", exc.http_status, error=exc, view="error", csrf=session.csrf if session else ""
        )

    # ----- the core, off the event loop ------------------------------------------------------
    async def call(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a core function in a worker thread (as the API's handlers do)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(func, *args, **kwargs))


def see_other(target: str) -> web.Response:
    """303 to a path of this server (after a form post, or to drop a sign-in nonce)."""
    return web.Response(status=303, headers={"Location": target, "Cache-Control": NO_STORE})


async def add_security_headers(page: Page, request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: the page's headers on every response of its routes, errors included."""
    if page.owns(request):
        response.headers.update(SECURITY_HEADERS)
        response.headers.setdefault("Cache-Control", NO_STORE)
