"""One-time sign-in links of the web page: what `vault-agent web` prints and opens.

`POST /sign-in/link` (the API: bearer token) issues a link `/sign-in?once=NONCE`; opening it
trades the nonce for the page's session cookie (`GET /sign-in`). A nonce is 32 random
bytes from `secrets`, good once and for `LINK_TTL_S` seconds, and lives only in this
server's memory, as its SHA-256 (a memory dump holds no usable nonce; a restart forgets
every link). The bearer token never appears in an address, so it never reaches a browser's
history, a terminal's scrollback beyond the CLI's own, or a log.

A spent nonce's hash is kept a while (`RECALL_S`) so that a second use, or a late one, is
told apart from a link this server never issued: each gets a page that says what happened
and which command makes a new link.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable

LINK_TTL_S = 120  # SPEC: a sign-in link expires within 2 minutes
RECALL_S = 3600  # a spent or expired link is recognised (and explained) this long
MAX_KEPT = 256  # links remembered at once; the oldest go first (issuing needs the token anyway)
NONCE_BYTES = 32


class LinkState(enum.Enum):
    """What opening a sign-in link found."""

    OK = "ok"  # signed in; the nonce is spent
    USED = "used"  # opened before
    EXPIRED = "expired"  # older than LINK_TTL_S
    UNKNOWN = "unknown"  # not issued by this server process (or long forgotten)


def _digest(nonce: str) -> bytes:
    return hashlib.sha256(nonce.encode("utf-8", "replace")).digest()


class SignInLinks:
    """The sign-in nonces of one server: issued, redeemed once, forgotten."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: dict[bytes, tuple[float, bool]] = {}  # digest -> (expires at, used)

    def issue(self) -> str:
        """A new nonce, good once for LINK_TTL_S seconds."""
        nonce = secrets.token_urlsafe(NONCE_BYTES)
        with self._lock:
            self._forget_old()
            self._kept[_digest(nonce)] = (self._clock() + LINK_TTL_S, False)
            while len(self._kept) > MAX_KEPT:
                del self._kept[next(iter(self._kept))]
        return nonce

    def redeem(self, nonce: str) -> LinkState:
        """Spend a nonce: OK once, then USED; EXPIRED after its time; UNKNOWN otherwise."""
        given = _digest(nonce)
        with self._lock:
            self._forget_old()
            # Constant-time comparison against every kept digest: the dict lookup alone
            # would be a timing oracle on the digest's prefix (harmless for a hash of 256
            # random bits, but cheap to rule out at these sizes).
            found = next((d for d in self._kept if hmac.compare_digest(d, given)), None)
            if found is None:
                return LinkState.UNKNOWN
            expires, used = self._kept[found]
            if used:
                return LinkState.USED
            if self._clock() >= expires:
                return LinkState.EXPIRED
            self._kept[found] = (expires, True)
            return LinkState.OK

    def _forget_old(self) -> None:
        now = self._clock()
        for digest in [d for d, (expires, _) in self._kept.items() if expires + RECALL_S < now]:
            del self._kept[digest]
