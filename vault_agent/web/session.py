"""The web page's session cookie and CSRF tokens (a one-time link buys the cookie: sign_in_links.py).

The cookie is signed, not stored: `v1.<expiry>.<nonce>.<mac>` with a key derived from the
server's bearer token, so a restarted server (same token file) keeps its signed-in tabs,
and a new token (delete the token file, restart) signs every browser out. It is HttpOnly
(no script reads it) and SameSite=Strict (no other site's page or link sends it). Each
session's CSRF token is a MAC of its nonce under the same key: state-changing requests
carry it in a form field or the `X-CSRF-Token` header, and also need an `Origin` (or, in
its absence, a `Referer`) naming this server's own origin. All comparisons are constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

SESSION_S = 7 * 24 * 3600  # a signed-in browser stays signed in for a week
COOKIE_PREFIX = "vault_agent_"
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"
_VERSION = "v1"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Session:
    nonce: str
    expires: int
    csrf: str


class PageSessions:
    """Issue and check the page's session cookies and CSRF tokens for one server."""

    def __init__(self, token: str, ports: set[int], clock: Callable[[], float] = time.time) -> None:
        self._key = hmac.new(token.encode("utf-8"), b"vault-agent web session v1", hashlib.sha256).digest()
        self._ports = ports  # filled in once the server is bound (port 0 picks one)
        self._clock = clock

    @property
    def cookie_name(self) -> str:
        """Cookies ignore ports: one name per port keeps two servers of one host apart."""
        return f"{COOKIE_PREFIX}{min(self._ports) if self._ports else 0}"

    def _mac(self, *parts: str) -> str:
        return _b64(hmac.new(self._key, ".".join(parts).encode("ascii"), hashlib.sha256).digest())

    def issue(self) -> tuple[str, Session]:
        """A new session: (cookie value, session)."""
        nonce = _b64(secrets.token_bytes(18))
        expires = int(self._clock()) + SESSION_S
        value = f"{_VERSION}.{expires}.{nonce}.{self._mac(_VERSION, str(expires), nonce)}"
        return value, Session(nonce, expires, self._mac("csrf", nonce))

    def verify(self, value: str | None) -> Session | None:
        """The session a cookie value proves, or None (absent, forged, expired, old key)."""
        parts = (value or "").split(".")
        if len(parts) != 4 or parts[0] != _VERSION or not parts[1].isdigit() or len(parts[1]) > 12:
            return None
        _v, expires, nonce, mac = parts
        if not hmac.compare_digest(
            mac.encode("ascii", "replace"), self._mac(_VERSION, expires, nonce).encode()
        ):
            return None
        if int(expires) <= self._clock():
            return None
        return Session(nonce, int(expires), self._mac("csrf", nonce))

    def cookie_attributes(self) -> dict[str, object]:
        return {"httponly": True, "samesite": "Strict", "path": "/", "max_age": SESSION_S}


def csrf_ok(session: Session, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(str(given).encode("utf-8", "replace"), session.csrf.encode())


def same_origin(host: str | None, origin: str | None, referer: str | None) -> bool:
    """True when the request comes from a page of this server: its Origin (else its
    Referer's origin) is `http(s)://<Host>`. Neither header → False (refused)."""
    if not host or origin == "null":  # an opaque origin (sandboxed frame, data: URL) is never ours
        return False
    claimed = origin or None
    if claimed is None and referer:
        parts = urlsplit(referer)
        claimed = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None
    if claimed is None:
        return False
    value = claimed.rstrip("/").lower()
    return value in (f"http://{host.lower()}", f"https://{host.lower()}")
