"""The one exception tree of vault-agent; SPEC.md's error table is the whole mapping.

    VaultAgentError                 INTERNAL            500  exit 1
    ├── InvalidParameter            INVALID_PARAMETER   400  exit 2
    ├── InvalidLimit                INVALID_LIMIT       400  exit 2
    ├── InvalidPath                 INVALID_PATH        400  exit 2
    ├── TooLarge                    TOO_LARGE           413  exit 2
    ├── InvalidQuery                INVALID_QUERY       400  exit 2
    ├── Unauthorized                UNAUTHORIZED        401  exit 3
    ├── Forbidden                   FORBIDDEN           403  exit 3
    ├── NotFound                    NOT_FOUND           404  exit 4
    ├── IndexNotFound               INDEX_NOT_FOUND     409  exit 4
    ├── IndexBusy                   INDEX_BUSY          409  exit 5
    ├── ServerUnavailable           SERVER_UNAVAILABLE   -   exit 6
    ├── IndexIncompatible           INDEX_INCOMPATIBLE  409  exit 7
    ├── Conflict                    CONFLICT            409  exit 8
    ├── Ambiguous                   AMBIGUOUS           409  exit 2
    ├── PermissionDenied            PERMISSION_DENIED   403  exit 3
    ├── StorageFull                 STORAGE_FULL        507  exit 9
    ├── StorageReadOnly             STORAGE_READ_ONLY   503  exit 9
    └── VaultUnavailable            VAULT_UNAVAILABLE   503  exit 9

`from_os_error` is the one place that turns an OS errno into one of these (EACCES/EPERM,
ENOSPC/EDQUOT, EROFS); everything else unexpected becomes INTERNAL with an incident id.
`VaultUnavailable` is raised where the vault root itself is gone (moved, deleted, unmounted):
a read cannot answer, and the indexer must not take the empty folder for "every note deleted".

Messages are written for the caller and say what to do next. They never contain an
absolute path, note text, a raw query or a secret: callers pass vault-relative paths only.
Three translators turn these into responses: the aiohttp middleware, the MCP tool wrapper
and the CLI runner; anything else they catch becomes `Internal` through `internal_error`.

A message that names parameters carries them as structure, not as words to find again:
`InvalidParameter.about("limit", "must be …")` is about one parameter (its subject),
`InvalidParameter.naming("give {range} … or {full} …")` names several. Each is a
`Mention` of the core's name (the MCP spelling, dotted into objects: `range.start_line`);
`message` spells them the MCP way, and a transport spells them its own way with
`spelled` (`api/surface_names.py`: `parameter 'range.startLine'` over HTTP, `option --end`
on the CLI). `parameter` is the one the error concerns: its first mention.
"""

from __future__ import annotations

import copy
import errno
import logging
import os
import uuid
from typing import Any, ClassVar, Literal, Self

from vault_agent.error_words import Mention, Spelling, Words, mcp_spelling, rendered, worded


class VaultAgentError(Exception):
    """Base of every error the product reports; unknown exceptions become ``Internal``."""

    code: ClassVar[str] = "INTERNAL"
    http_status: ClassVar[int] = 500
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.words: Words = (message,)

    @classmethod
    def about(cls, parameter: str, rest: str) -> Self:
        """The error of one parameter: `parameter 'name' <rest>` (`rest` is plain text)."""
        return cls._of((Mention(parameter, lead=True), " " + rest))

    @classmethod
    def naming(cls, template: str, **values: object) -> Self:
        """An error whose message names parameters: each `{name}` field of `template`
        (`{name:lead}` as the subject) is one; fields given in `values` are plain text.

        Raises:
            ValueError: a parameter's field with a format other than `lead`.
        """
        return cls._of(worded(template, values))

    @classmethod
    def _of(cls, words: Words) -> Self:
        err = cls(rendered(words, mcp_spelling))
        err.words = words
        return err

    @property
    def mentions(self) -> tuple[Mention, ...]:
        return tuple(w for w in self.words if isinstance(w, Mention))

    @property
    def parameter(self) -> str | None:
        """The parameter this error concerns (the core's name), if any."""
        return self.mentions[0].name if self.mentions else None

    def spelled(self, spelling: Spelling) -> Self:
        """This error with its parameters spelled by `spelling` (itself when it names none)."""
        if not self.mentions:
            return self
        out = copy.copy(self)
        out.message = rendered(self.words, spelling)
        out.args = (out.message,)
        return out

    def to_body(self) -> dict[str, Any]:
        """The canonical error object, identical on every surface."""
        return {"error": {"code": self.code, "message": self.message}}


class Internal(VaultAgentError):
    """An unexpected failure; the message carries only an id to find in the log."""

    def __init__(self, incident_id: str | None = None) -> None:
        self.incident_id = incident_id or uuid.uuid4().hex[:12]
        super().__init__(f"internal error; see the server log for incident {self.incident_id}")


def internal_error(logger: logging.Logger, what: str, **extra: Any) -> Internal:
    """The exception being handled as `Internal`: its traceback is logged under a new incident id.

    The one translation of unexpected failures, shared by the three transport boundaries;
    call it inside `except`. The log formatter scrubs private paths from the traceback.
    """
    err = Internal()
    logger.exception(
        "%s (incident %s)",
        what,
        err.incident_id,
        extra={**extra, "incident": err.incident_id, "code": err.code},
    )
    return err


class InvalidParameter(VaultAgentError):
    code = "INVALID_PARAMETER"
    http_status = 400
    exit_code = 2


class InvalidLimit(VaultAgentError):
    code = "INVALID_LIMIT"
    http_status = 400
    exit_code = 2


class InvalidPath(VaultAgentError):
    code = "INVALID_PATH"
    http_status = 400
    exit_code = 2


class TooLarge(VaultAgentError):
    code = "TOO_LARGE"
    http_status = 413
    exit_code = 2


class InvalidQuery(VaultAgentError):
    """A vault_query filter or DQL query that does not parse or is not supported: the
    message gives the position and what was expected, or names the construct."""

    code = "INVALID_QUERY"
    http_status = 400
    exit_code = 2


class Unauthorized(VaultAgentError):
    code = "UNAUTHORIZED"
    http_status = 401
    exit_code = 3


class Forbidden(VaultAgentError):
    code = "FORBIDDEN"
    http_status = 403
    exit_code = 3


class NotFound(VaultAgentError):
    code = "NOT_FOUND"
    http_status = 404
    exit_code = 4


class IndexNotFound(VaultAgentError):
    code = "INDEX_NOT_FOUND"
    http_status = 409
    exit_code = 4

    def __init__(self, message: str = "no index snapshot exists yet; run 'vault-agent index'") -> None:
        super().__init__(message)


class IndexBusy(VaultAgentError):
    code = "INDEX_BUSY"
    http_status = 409
    exit_code = 5

    def __init__(
        self,
        message: str = "another vault-agent process is indexing this vault; "
        "wait for it to finish or stop it, then retry",
    ) -> None:
        super().__init__(message)


class ServerUnavailable(VaultAgentError):
    code = "SERVER_UNAVAILABLE"
    http_status = 503
    exit_code = 6


class IndexIncompatible(VaultAgentError):
    code = "INDEX_INCOMPATIBLE"
    http_status = 409
    exit_code = 7

    def __init__(
        self,
        message: str = "the index was built by a different schema or configuration; "
        "run 'vault-agent reindex'",
    ) -> None:
        super().__init__(message)


class Conflict(VaultAgentError):
    code = "CONFLICT"
    http_status = 409
    exit_code = 8


class Ambiguous(VaultAgentError):
    """A note name (or a heading) that matches several notes (sections); the message lists them."""

    code = "AMBIGUOUS"
    http_status = 409
    exit_code = 2


class PermissionDenied(VaultAgentError):
    """The OS denies vault-agent access to a vault file or folder (EACCES/EPERM)."""

    code = "PERMISSION_DENIED"
    http_status = 403
    exit_code = 3


class StorageFull(VaultAgentError):
    """A write found no space left (ENOSPC/EDQUOT); the last snapshot keeps serving."""

    code = "STORAGE_FULL"
    http_status = 507
    exit_code = 9


class StorageReadOnly(VaultAgentError):
    """The state dir (or the vault, for a write) cannot be written (EROFS, or EACCES on
    the state dir); readers keep serving the last snapshot."""

    code = "STORAGE_READ_ONLY"
    http_status = 503
    exit_code = 9


class VaultUnavailable(VaultAgentError):
    """The vault root folder is missing or not a folder any more (moved, deleted, unmounted)."""

    code = "VAULT_UNAVAILABLE"
    http_status = 503
    exit_code = 9

    def __init__(
        self,
        message: str = "the vault folder is missing (moved, deleted or not mounted); files cannot be "
        "read until it is back. Index-backed answers keep coming from the last snapshot, and "
        "the index catches up by itself when the folder returns",
    ) -> None:
        super().__init__(message)


_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_DENIED_ERRNOS = frozenset({errno.EACCES, errno.EPERM})


def _errno_in_text(text: str) -> int | None:
    """The errno named in a library's OSError text (pyarrow raises OSError without errno)."""
    for err in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
        if os.strerror(err) in text:
            return err
    return None


def from_os_error(exc: OSError, where: Literal["vault", "state"]) -> VaultAgentError | None:
    """Our error for an OS failure in the vault or the state dir, or None (unexpected).

    Messages never carry the OS's file name (an absolute path) or its text.
    """
    err = exc.errno if exc.errno is not None else _errno_in_text(str(exc))
    if err in _FULL_ERRNOS:
        place = "the vault's disk" if where == "vault" else "the index state dir's disk"
        return StorageFull(
            f"no space left on {place}; nothing was changed. The last index snapshot keeps "
            "serving; free some space and the indexer resumes by itself"
        )
    if err == errno.EROFS or (where == "state" and err in _DENIED_ERRNOS):
        place = "the vault" if where == "vault" and err == errno.EROFS else "the index state dir"
        return StorageReadOnly(
            f"{place} is read-only or not writable for vault-agent; nothing was changed. "
            "The last index snapshot keeps serving; fix the permissions or the mount (or pass "
            "another --index-dir) and retry"
        )
    if err in _DENIED_ERRNOS:
        return PermissionDenied(
            "the operating system denies vault-agent access to this file or folder (its "
            "permissions); fix them (e.g. chmod u+rw) and retry"
        )
    return None


# ----------------------------------------------------------------------------- parameter wording
# One voice for bad parameters on every surface (issue 23): a message names the parameter
# (a `Mention`, spelled per surface: `api/surface_names.py`) and says what is allowed,
# never what was sent.


def range_text(low: int | None, high: int | None) -> str:
    """'from 1 to 500', 'of at least 1' or 'of at most 10' (thousands separated)."""
    if low is not None and high is not None:
        return f"from {low:,} to {high:,}"
    if low is not None:
        return f"of at least {low:,}"
    return f"of at most {high:,}" if high is not None else ""


def out_of_range(
    name: str,
    low: int | None,
    high: int | None,
    *,
    kind: str = "an integer",
    error: type[VaultAgentError] | None = None,
) -> VaultAgentError:
    """The error of a number outside its allowed range: `parameter 'limit' must be an integer from 1 to 50`."""
    cls = error or InvalidParameter
    return cls.about(name, f"must be {kind} {range_text(low, high)}".rstrip())


def empty_parameter(name: str) -> InvalidParameter:
    """The error of a required text given empty or blank."""
    return InvalidParameter.about(name, "must not be empty")


def too_long_parameter(name: str, max_chars: int) -> InvalidParameter:
    """The error of a text over its length cap."""
    return InvalidParameter.about(name, f"must be at most {max_chars:,} characters")


def bad_cursor(name: str = "cursor") -> InvalidParameter:
    """The error of a cursor that no previous answer gave."""
    return InvalidParameter.about(name, "must be the next_cursor of a previous answer")


ALL_ERRORS: tuple[type[VaultAgentError], ...] = (
    Internal,
    InvalidParameter,
    InvalidLimit,
    InvalidPath,
    TooLarge,
    InvalidQuery,
    Unauthorized,
    Forbidden,
    NotFound,
    IndexNotFound,
    IndexBusy,
    ServerUnavailable,
    IndexIncompatible,
    Conflict,
    Ambiguous,
    PermissionDenied,
    StorageFull,
    StorageReadOnly,
    VaultUnavailable,
)

BY_CODE: dict[str, type[VaultAgentError]] = {cls.code: cls for cls in ALL_ERRORS}


def from_body(body: dict[str, Any]) -> VaultAgentError:
    """Rebuild an error from its canonical body (the CLI uses it on server replies)."""
    err = body.get("error", {}) if isinstance(body, dict) else {}
    code = str(err.get("code", "INTERNAL"))
    message = str(err.get("message", "unexpected error"))
    cls = BY_CODE.get(code, VaultAgentError)
    exc = VaultAgentError.__new__(cls)
    Exception.__init__(exc, message)
    exc.message = message
    exc.words = (message,)
    return exc
