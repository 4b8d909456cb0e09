"""Sign-in and the security rules of the page's routes, over the real aiohttp server.

The token buys an HttpOnly, SameSite=Strict cookie and leaves the address bar; every page
response carries the strict CSP; state changes need the session's CSRF token and a
same-origin request; the bearer-token API never takes the cookie (it cannot be driven
cross-site) and the page never takes the bearer token; Host rules apply to the page too.
"""

from __future__ import annotations

from api.serverkit import ServerThread

from vault_agent.web.page import CSP
from vault_agent.web.session import PageSessions
from web.pagekit import HOSTILE, PageClient, element_tags, exchange

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


def test_the_token_buys_a_strict_httponly_cookie_and_leaves_the_address(server: ServerThread) -> None:
    first = exchange(server, "GET", f"/?token={server.token}")
    assert (first.status, first.headers["location"]) == (303, "/")
    (cookie,) = first.cookies()
    attrs = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "path", "max-age", "samesite"} <= attrs
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    assert server.token not in cookie  # the cookie is a signed session, not the token
    # From any view: the token is dropped, the rest of the address kept.
    deep = exchange(server, "GET", f"/ui/search?q=lamp&token={server.token}&mode=lexical")
    assert (deep.status, deep.headers["location"]) == (303, "/ui/search?q=lamp&mode=lexical")
    page = PageClient(server)
    health = page.get("/")
    assert health.status == 200 and "Health of the index" in health.text
    assert server.token not in health.text


def test_without_a_session_every_view_asks_to_sign_in(server: ServerThread) -> None:
    for path in ["/", "/ui/search?q=a", "/ui/conversations", "/ui/events"]:
        resp = exchange(server, "GET", path)
        assert resp.status == 401, path
    assert "Sign in" in exchange(server, "GET", "/").text
    wrong = exchange(server, "GET", "/?token=not-the-token")
    assert wrong.status == 401 and "not this server" in wrong.text and not wrong.cookies()
    forged = exchange(
        server, "GET", "/", headers={"Cookie": f"vault_agent_{server.port}=v1.99999999999.abc.def"}
    )
    assert forged.status == 401
    # The bearer token is the API's credential, never the page's.
    bearer = exchange(server, "GET", "/", headers={"Authorization": f"Bearer {server.token}"})
    assert bearer.status == 401


def test_a_pasted_token_signs_in_from_this_origin_only(server: ServerThread) -> None:
    origin = f"http://127.0.0.1:{server.port}"
    body = f"token={server.token}".encode()
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    ok = exchange(server, "POST", "/ui/sign-in", headers={**form, "Origin": origin}, body=body)
    assert ok.status == 303 and ok.cookies()
    elsewhere = exchange(
        server, "POST", "/ui/sign-in", headers={**form, "Origin": "http://evil.example"}, body=body
    )
    assert elsewhere.status == 403 and not elsewhere.cookies()


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
