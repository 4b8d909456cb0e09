"""Server access rules (SPEC.md "Server access", RELIABILITY.md §3): token, Host, Origin, body cap.

- Token: `Authorization: Bearer <token>` on every route, compared in constant time. The
  token is `settings.token` (flag, `VAULT_AGENT_TOKEN` or config), else `<index-dir>/token`,
  created with mode 0600 on first start.
- Host: loopback names with the server's real port, plus `settings.allowed_hosts`
  (DNS-rebinding defence); anything else is `403 FORBIDDEN`, `/mcp` included.
- Origin: absent is fine (non-browser clients); present and not allowlisted → 403.
- Body: at most 4 MiB (`413 TOO_LARGE`).
- A 401 carries `WWW-Authenticate: Bearer realm="vault-agent", error_description="send
  Authorization: Bearer <token>; the token is in the file <vault>/.vault-agent/token"` (RFC 6750;
  with `error="invalid_token"` when a token was sent), and `/.well-known/*` answers 404, so an
  MCP client asks for the token instead of starting OAuth; header and body say where the
  token file is (`<vault>/…`, never an absolute path) and how to send it.
- Vault identity: a client may send `X-Vault-Id` (`vault_fingerprint` of the vault it means);
  a server for another vault answers CONFLICT saying so, instead of a puzzling 401.
The same host/origin lists configure the MCP SDK's own `TransportSecuritySettings`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import logging
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from vault_agent.config import Settings
from vault_agent.errors import Conflict, Forbidden, InvalidParameter, Unauthorized
from vault_agent.private_dir import make_private_dir, make_state_dirs

log = logging.getLogger("vault_agent.http")

MAX_BODY_BYTES = 4 * 1024 * 1024
LOOPBACK_NAMES: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
REALM = "vault-agent"
VAULT_ID_HEADER = "X-Vault-Id"
SURFACE_HEADER = "X-Vault-Agent-Surface"  # `cli` from the CLI: error messages then name its flags


def vault_fingerprint(vault: Path) -> str:
    """A short id of a vault folder (hash of its resolved path; the path itself never leaves)."""
    return hashlib.sha256(str(vault.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def bearer_challenge(authorization: str | None, where: str) -> str:
    """The RFC 6750 `WWW-Authenticate` value of a 401: how to pass the token and where it is
    (`where`, from `token_place`); `error="invalid_token"` only when a token was sent."""
    text = f"send Authorization: Bearer <token>; {where}"
    description = "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in text)  # a quoted-string
    error = ', error="invalid_token"' if authorization else ""
    return f'Bearer realm="{REALM}"{error}, error_description="{description}"'


def token_place(settings: Settings) -> str:
    """Where the token of this server is, in words that never hold an absolute path."""
    if settings.token:
        return "the token is the one configured for this server (VAULT_AGENT_TOKEN or server.token)"
    inside = settings.index_dir_in_vault()
    if inside is not None:
        return f"the token is in the file <vault>/{inside}/token"
    return "the token is in the file <index-dir>/token (the server's --index-dir)"


def token_hint(settings: Settings) -> str:
    """The 401 message's advice: how to pass the token and where to find it."""
    if settings.token:
        return token_place(settings)
    return f"{token_place(settings)} (the vault-agent CLI reads it by itself)"


def is_loopback_host(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def read_or_create_token(settings: Settings) -> str:
    """The bearer token of this server: configured, else `<index-dir>/token` (created 0600).

    Raises:
        InvalidParameter: the token file exists but is empty or unreadable.
    """
    if settings.token:
        return settings.token
    write_token_file(settings.token_file, secrets.token_urlsafe(32))
    return read_token_file(settings.token_file, required=True) or ""


TOKEN_CHECK_S = 1.0  # how often a running server checks that its token file still exists


def write_token_file(path: Path, token: str, *, again: bool = False) -> None:
    """Create the token file (0600) holding `token`; an existing file is left as it is.
    `again` (the state dir was deleted): never make the state dir's missing parents."""
    if again:
        make_state_dirs(path.parent, path.parent)
    else:
        make_private_dir(path.parent)  # the state dir: 0700 whatever the umask
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token + "\n")
        fh.flush()
        os.fsync(fh.fileno())


async def keep_token_file(settings: Settings, token: str) -> None:
    """While the server runs, put its token file back if the state dir was deleted (the
    local CLI reads it; without it every command would answer UNAUTHORIZED). Same token:
    clients holding it keep working. Nothing to keep when the token was configured."""
    if settings.token:
        return
    path = settings.token_file
    while True:
        await asyncio.sleep(TOKEN_CHECK_S)
        if not path.exists():
            try:
                write_token_file(path, token, again=True)
            except OSError:
                continue  # a read-only or full disk: the next check tries again
            log.warning("the token file was deleted; written again", extra={"event": "token_restored"})


def read_token_file(path: Path, *, required: bool = False) -> str | None:
    """The token stored in a token file, or None when there is none.

    Raises:
        InvalidParameter: `required` and the file is missing, empty or unreadable.
    """
    try:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # tighten a token file someone loosened
        token = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        token = ""
    if not token and required:
        raise InvalidParameter(
            "the token file in the state dir is empty or unreadable; delete it to generate a new one"
        )
    return token or None


def check_bind_allowed(settings: Settings, host: str) -> None:
    """Refuse a non-loopback bind unless a token was configured explicitly.

    Raises:
        InvalidParameter: binding a non-loopback address without VAULT_AGENT_TOKEN / server.token.
    """
    if is_loopback_host(host):
        return
    if not settings.token:
        raise InvalidParameter(
            "binding a non-loopback address needs an explicit token: set VAULT_AGENT_TOKEN "
            "(or server.token in the config) and list the public name in server.allowed_hosts"
        )


@dataclass
class AccessPolicy:
    """Host, Origin and token rules of one server; ports are filled in once bound."""

    token: str
    bind_host: str = "127.0.0.1"
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    ports: set[int] = field(default_factory=set)
    token_hint: str = "the token is in the file <index-dir>/token (the server's --index-dir)"
    token_place: str = "the token is in the file <index-dir>/token (the server's --index-dir)"
    vault_id: str = ""

    @classmethod
    def from_settings(cls, settings: Settings, token: str, bind_host: str) -> AccessPolicy:
        return cls(
            token=token,
            bind_host=bind_host,
            allowed_hosts=tuple(h.lower() for h in settings.allowed_hosts),
            allowed_origins=tuple(o.rstrip("/") for o in settings.allowed_origins),
            token_hint=token_hint(settings),
            token_place=token_place(settings),
            vault_id=vault_fingerprint(settings.vault),
        )

    # ----- the three checks ------------------------------------------------------------
    def host_names(self) -> list[str]:
        """Every accepted Host header value for the bound ports (plus configured hosts)."""
        names = list(LOOPBACK_NAMES)
        bind = self.bind_host.lower()
        if bind not in ("0.0.0.0", "::", "") and not is_loopback_host(bind):
            names.append(f"[{bind}]" if ":" in bind else bind)
        values = [f"{n}:{p}" for n in names for p in sorted(self.ports)]
        return values + list(self.allowed_hosts)

    def check_host(self, host: str | None) -> None:
        """Raises: Forbidden when the Host header is missing or not one of ours."""
        value = (host or "").strip().lower()
        if not value or value not in self.host_names():
            raise Forbidden("the Host header is not allowed; call the server by its loopback address")

    def own_origins(self) -> list[str]:
        """The server's own loopback origins (same scheme, name and port): a page it served."""
        return [f"http://{n}:{p}" for n in LOOPBACK_NAMES for p in sorted(self.ports)]

    def origin_allowed(self, origin: str) -> bool:
        value = origin.rstrip("/")
        return value in self.allowed_origins or value.lower() in self.own_origins()

    def check_origin(self, origin: str | None) -> None:
        """Raises: Forbidden when a browser Origin is present and not allowlisted."""
        if origin is not None and not self.origin_allowed(origin):
            raise Forbidden("this Origin is not allowed; add it to server.allowed_origins to permit it")

    def check_token(self, authorization: str | None) -> None:
        """Raises: Unauthorized when the bearer token is missing or wrong."""
        scheme, _, given = (authorization or "").partition(" ")
        ok = scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), self.token.encode("utf-8")
        )
        if not ok:
            raise Unauthorized(
                f"missing or wrong bearer token; send the header 'Authorization: Bearer <token>'; {self.token_hint}"
            )

    def check_vault(self, claimed: str | None) -> None:
        """Raises: Conflict when the client names another vault than the one served here."""
        if claimed and self.vault_id and claimed.strip() != self.vault_id:
            raise Conflict(
                "this server serves another vault than the one asked for; start 'vault-agent serve' "
                "for that vault (another --port) or point --server at its server"
            )

    def mcp_security_lists(self) -> tuple[list[str], list[str]]:
        """Allowed hosts and origins for the MCP SDK's TransportSecuritySettings."""
        return self.host_names(), list(self.allowed_origins) + self.own_origins()
