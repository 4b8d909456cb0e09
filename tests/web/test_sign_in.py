"""Sign-in and the security rules of the page's routes, over the real aiohttp server.

A one-time link (`POST /sign-in/link`, bearer token) buys an HttpOnly, SameSite=Strict
cookie once and leaves the address bar; a link used twice, late or not ours explains
itself; every page response carries the strict CSP; state changes need the session's CSRF
token and a same-origin request; the bearer-token API never takes the cookie (it cannot be
driven cross-site) and the page never takes the bearer token, neither in a header nor in
its address; Host rules apply to the page too.
"""

from __future__ import annotations

import json

from api.serverkit import ServerThread

from vault_agent.api.http import PAGE_KEY
from vault_agent.web.page import CSP, Page
from vault_agent.web.session import PageSessions
from vault_agent.web.sign_in_links import LINK_TTL_S, MAX_KEPT, RECALL_S, LinkState, SignInLinks
from web.pagekit import HOSTILE, PageClient, element_tags, exchange, sign_in_link

HOSTILE_TEXT = HOSTILE.replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")

PAGE_GETS = [
    "/",
    "/?part=summary",
    "/ui/search",
    "/ui/search?q=lighthouse",
    "/ui/search?q=x&part=results",
    "/ui/note?path=projects/alpha/sections.md",
    "/ui/conversations",
    "/ui/note?path=nope.md",
]


def _page_of(server: ServerThread) -> Page:
    assert server.server is not None
    page = server.server.runner.app[PAGE_KEY]
    assert isinstance(page, Page)
    return page


def test_a_link_buys_a_strict_httponly_cookie_once_and_leaves_the_address(server: ServerThread) -> None:
    link = sign_in_link(server)
    first = exchange(server, "GET", link)
    assert (first.status, first.headers["location"]) == (303, "/")
    (cookie,) = first.cookies()
    attrs = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "path", "max-age", "samesite"} <= attrs
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    assert server.token not in cookie  # the cookie is a signed session, not the token
    health = exchange(server, "GET", "/", headers={"Cookie": cookie.split(";", 1)[0]})
    assert health.status == 200 and "Health of the index" in health.text
    assert server.token not in health.text
    again = exchange(server, "GET", link)
    assert again.status == 401 and not again.cookies()
    assert "used already" in again.text and "vault-agent web" in again.text


def test_the_link_needs_the_bearer_token_and_names_the_address_asked(server: ServerThread) -> None:
    for auth in ({}, {"Authorization": "Bearer wrong"}):
        refused = exchange(server, "POST", "/sign-in/link", headers=auth)
        assert refused.status == 401 and json.loads(refused.text)["error"]["code"] == "UNAUTHORIZED"
    # The session cookie is the page's credential, never the API's.
    page = PageClient(server)
    by_cookie = exchange(
        server, "POST", "/sign-in/link", headers={"Cookie": page.cookie, "Origin": page.origin}
    )
    assert by_cookie.status == 401
    made = exchange(
        server,
        "POST",
        "/sign-in/link",
        headers={"Authorization": f"Bearer {server.token}", "Host": f"localhost:{server.port}"},
    )
    body = json.loads(made.text)
    assert made.status == 200 and body["warnings"] == []
    assert body["data"]["expires_in_seconds"] == LINK_TTL_S <= 120
    assert body["data"]["url"].startswith(f"http://localhost:{server.port}/sign-in?once=")
    assert server.token not in made.text and made.headers["cache-control"] == "no-store"
    assert exchange(server, "GET", "/sign-in/link").status == 401  # a GET is no way around the token


def test_late_unknown_and_prefetched_links_explain_themselves(server: ServerThread) -> None:
    page = _page_of(server)
    now = [1000.0]
    kept, page.links = page.links, SignInLinks(clock=lambda: now[0])
    try:
        late = sign_in_link(server)
        now[0] += LINK_TTL_S + 1
        expired = exchange(server, "GET", late)
        assert expired.status == 401 and not expired.cookies()
        assert "expired" in expired.text and "vault-agent web" in expired.text
        unknown = exchange(server, "GET", "/sign-in?once=made-up")
        assert unknown.status == 401 and "did not make this sign-in link" in unknown.text
        bare = exchange(server, "GET", "/sign-in")
        assert bare.status == 401 and "vault-agent web" in bare.text
        fresh = sign_in_link(server)
        # A browser's speculative fetch of a typed address does not spend the link.
        prefetched = exchange(server, "GET", fresh, headers={"Sec-Purpose": "prefetch"})
        assert prefetched.status == 503 and not prefetched.cookies()
        assert exchange(server, "GET", fresh).status == 303
    finally:
        page.links = kept


def test_the_token_never_signs_a_browser_in(server: ServerThread) -> None:
    for path in ["/", "/ui/search?q=a", "/ui/conversations", "/ui/events"]:
        resp = exchange(server, "GET", path)
        assert resp.status == 401, path
    assert "Sign in" in exchange(server, "GET", "/").text
    for path in (f"/?token={server.token}", "/?token=not-the-token", f"/ui/search?q=a&token={server.token}"):
        old = exchange(server, "GET", path)
        assert old.status == 401 and not old.cookies(), path
        assert "no longer signs in with the token" in old.text and "vault-agent web" in old.text
    forged = exchange(
        server, "GET", "/", headers={"Cookie": f"vault_agent_{server.port}=v1.99999999999.abc.def"}
    )
    assert forged.status == 401
    # The bearer token is the API's credential, never the page's.
    bearer = exchange(server, "GET", "/", headers={"Authorization": f"Bearer {server.token}"})
    assert bearer.status == 401
    # No form takes the token pasted by hand any more.
    origin = f"http://127.0.0.1:{server.port}"
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": origin}
    pasted = exchange(server, "POST", "/ui/sign-in", headers=form, body=f"token={server.token}".encode())
    assert not pasted.cookies() and "UNAUTHORIZED" in pasted.text  # no page route: the API's 401


def test_links_are_single_use_short_lived_and_kept_hashed() -> None:
    now = [0.0]
    links = SignInLinks(clock=lambda: now[0])
    nonce = links.issue()
    assert len(nonce) >= 43  # 32 random bytes
    assert nonce not in repr(vars(links))  # only its digest is kept
    assert links.redeem(nonce) is LinkState.OK
    assert links.redeem(nonce) is LinkState.USED
    late = links.issue()
    now[0] += LINK_TTL_S
    assert links.redeem(late) is LinkState.EXPIRED
    assert links.redeem(late) is LinkState.EXPIRED  # a late try does not make it "used"
    assert links.redeem("x" + late) is LinkState.UNKNOWN
    now[0] += RECALL_S + 1
    assert links.redeem(nonce) is LinkState.UNKNOWN  # forgotten at last
    many = [links.issue() for _ in range(MAX_KEPT + 5)]
    assert links.redeem(many[0]) is LinkState.UNKNOWN  # the oldest went first
    assert links.redeem(many[-1]) is LinkState.OK


def test_sessions_expire_and_die_with_the_token() -> None:
    now = [1_000_000.0]
    sessions = PageSessions("token-a", {8765}, clock=lambda: now[0])
    value, session = sessions.issue()
    assert sessions.verify(value) == session
    assert PageSessions("token-b", {8765}).verify(value) is None  # a new token signs everyone out
    assert sessions.verify("v2" + value[2:]) is None  # another format version
    tampered = value.rsplit(".", 1)[0] + ".AAAA"
    assert sessions.verify(tampered) is None
    now[0] += 7 * 24 * 3600 + 1
    assert sessions.verify(value) is None
    assert sessions.cookie_name == "vault_agent_8765"


def test_every_page_response_carries_the_strict_csp(server: ServerThread) -> None:
    page = PageClient(server)
    responses = [page.get(p) for p in PAGE_GETS]
    responses += [exchange(server, "GET", "/"), exchange(server, "GET", "/ui/static/app.js")]
    responses += [page.post("/ui/conversations/c20300101T000000000Z-abcdef/end", {}, csrf=False)]
    responses += [exchange(server, "GET", "/", headers={"Host": "evil.example"})]
    for resp in responses:
        assert resp.headers.get("content-security-policy") == CSP, resp.status
        assert resp.headers["x-content-type-options"] == "nosniff"
        assert resp.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in CSP and "unsafe" not in CSP and "http" not in CSP
    for path in ("/ui/search?q=lighthouse", "/ui/note?path=projects/alpha/hostile.md"):
        tags = element_tags(page.get(path).text)
        assert HOSTILE_TEXT in page.get(path).text  # shown, escaped
        assert [t for t in tags if t[0] in ("img", "style", "iframe")] == []
        assert [t for t in tags if any(a.startswith("on") or a == "style" for a in t[1])] == []
        assert [t for t in tags if t[0] == "script" and t[1] != {"src": t[1].get("src"), "defer": None}] == []
    assert page.get("/").headers["cache-control"] == "no-store"


def test_state_changes_need_csrf_and_the_same_origin(server: ServerThread) -> None:
    page = PageClient(server)
    end = "/ui/conversations/c20300101T000000000Z-abcdef/end"
    assert page.post(end, {}, csrf=False).status == 403  # no CSRF token
    assert page.post(end, {"csrf": "forged"}, csrf=False).status == 403
    assert page.post(end, {}, origin="http://evil.example").status == 403  # a cross-site form
    assert page.post(end, {}, origin="null").status == 403  # a sandboxed frame
    assert page.post(end, {}, origin=None).status == 403  # neither Origin nor Referer
    referer = page.post(end, {}, origin=None, Referer=f"{page.origin}/ui/conversations")
    assert referer.status == 404  # past the checks: that conversation does not exist
    assert page.post(end, {}).status == 404
    assert exchange(server, "POST", end, headers={"Origin": page.origin}).status == 401  # no session


def test_the_api_never_takes_the_cookie(server: ServerThread) -> None:
    page = PageClient(server)
    for method, path in [
        ("GET", "/status"),
        ("GET", "/conversations"),
        ("POST", "/conversations/undo"),
        ("GET", "/messages/stream"),
    ]:
        resp = exchange(
            server,
            method,
            path,
            headers={"Cookie": page.cookie, "X-CSRF-Token": page.csrf, "Origin": page.origin},
        )
        assert resp.status == 401, path
        assert resp.headers["content-type"].startswith("application/json")


def test_host_and_origin_rules_cover_the_page(server: ServerThread) -> None:
    page = PageClient(server)
    assert page.get("/", Host="evil.example").status == 403
    assert page.get("/", Host=f"localhost:{server.port}").status == 200
    assert page.get("/ui/search", Origin="http://evil.example").status == 403


def test_every_page_route_is_documented(server: ServerThread) -> None:
    from aiohttp import web
    from api.serverkit import REPO

    from vault_agent.api.security import AccessPolicy
    from vault_agent.web.mount import mount_web_page

    app = web.Application()
    page = mount_web_page(app, server.ctx, AccessPolicy(token="t"))
    doc = (REPO / "docs" / "web.md").read_text(encoding="utf-8")
    routes = sorted({r.resource.canonical for r in app.router.routes() if r.resource in page.resources})
    assert len(routes) == 12
    assert [
        r for r in routes if f"`GET {r}" not in doc and f"`POST {r}" not in doc and f"{r}`" not in doc
    ] == []
    # The API route beside them (bearer token): in web.md and in the API's own reference.
    api = {
        (r.method, r.resource.canonical)
        for r in app.router.routes()
        if r.resource is not None and r.resource not in page.resources
    }
    assert api == {("POST", "/sign-in/link")}
    http_doc = (REPO / "docs" / "http-api.md").read_text(encoding="utf-8")
    assert "`POST /sign-in/link`" in doc and "`POST /sign-in/link`" in http_doc
