"""Which write is allowed where: protected folders, `.system/`, `daily/` (seed 002), temp names.

Seed 002 rules, exactly:
- `.system/` is reserved: never created, written, replaced, moved or deleted (readable).
- under `daily/` only `daily/YYYY-MM-DD.md` (a valid calendar date) exists; it is created
  by `vault_create` only, then append-only (`vault_write` mode `append`); never
  overwritten, replaced or edited. Moving or deleting a daily note is refused too (an
  append-only log loses nothing). The `daily` folder itself may be created.
Folder names compare case-insensitively after NFC with trailing dots/spaces dropped
(`Daily/`, `.SYSTEM./`), the same fold the kernel uses for protected folders.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from vault_agent.errors import Forbidden, InvalidPath
from vault_agent.files.atomic import is_temp_name
from vault_agent.paths import DAILY_DIR, Vault, display, is_daily, is_system, top_folder

Action = Literal[
    "create", "overwrite", "append", "replace", "edit", "move_from", "move_to", "delete", "mkdir"
]

_DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_DAILY_ALLOWED: frozenset[str] = frozenset({"create", "append"})
_NEW_NAME_ACTIONS: frozenset[str] = frozenset({"create", "move_to", "mkdir"})


def is_daily_name(name: str) -> bool:
    """True for `YYYY-MM-DD.md` with a real calendar date."""
    m = _DAILY_NAME.match(name)
    if m is None:
        return False
    try:
        dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def check_write(vault: Vault, rel: str, action: Action) -> None:
    """Refuse a write that a policy forbids, before any I/O.

    Raises:
        InvalidPath: the vault root, or one of vault-agent's own temp names.
        Forbidden: a protected folder, `.system/`, or the `daily/` policy.
    """
    if not rel:
        raise InvalidPath("the vault root itself cannot be written, moved or deleted")
    vault.check_not_protected(rel)
    if is_system(rel):
        raise Forbidden(f"'{display(rel)}' is inside .system/, which is reserved and read-only for tools")
    if any(is_temp_name(part) for part in rel.split("/")):
        raise InvalidPath(f"'{display(rel)}' uses a name reserved for vault-agent temp files")
    if action in _NEW_NAME_ACTIONS and any(part.endswith((".", " ")) for part in rel.split("/")):
        # Windows and sync clients drop a trailing dot/space, so such a name would alias
        # another file there; refused before any I/O (security probe "trailing dot/space").
        raise InvalidPath(f"'{display(rel)}': a file or folder name must not end with a dot or a space")
    if is_daily(rel):
        _check_daily(rel, action)
    elif top_folder(rel) == DAILY_DIR and action in ("move_from", "move_to", "delete"):
        raise Forbidden("the daily/ folder holds append-only daily notes; it cannot be moved or deleted")


def _check_daily(rel: str, action: Action) -> None:
    parts = rel.split("/")
    if action == "mkdir" or len(parts) != 2 or not is_daily_name(parts[1]):
        raise Forbidden(
            f"'{display(rel)}': under daily/ only daily/YYYY-MM-DD.md notes with a valid date are allowed"
        )
    if action not in _DAILY_ALLOWED:
        raise Forbidden(
            f"'{display(rel)}' is a daily note: create it with vault_create, then only append "
            "(vault_write mode 'append'); it is never overwritten, replaced, edited, moved or deleted"
        )


def check_folder_contents(vault: Vault, rel: str, names: list[str]) -> None:
    """Refuse moving/deleting a folder that holds a protected folder (e.g. a nested `.git`).

    Raises:
        Forbidden: one of the contained paths is protected.
    """
    for name in names:
        if vault.is_protected(name):
            raise Forbidden(
                f"'{display(rel)}' contains a protected folder; vault-agent never moves or deletes it"
            )
