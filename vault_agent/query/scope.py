"""Where a line search looks: a folder prefix and a file-name glob, checked once up front.

Shared by `vault_search` (grep) and `vault_find`; the same scope filters disk walks in
Python (`accepts`) and snapshot tables in SQL (`sql`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vault_agent.errors import InvalidPath
from vault_agent.paths import Vault, display, normalize_rel_path
from vault_agent.query.globmatch import compile_glob, glob_sql_regex


@dataclass
class Scope:
    prefix: str  # canonical folder, '' = whole vault
    glob: str | None
    notes: frozenset[str] | None = None  # search filters' notes (structured/candidates.py); None: all

    def within(self, notes: frozenset[str] | None) -> Scope:
        """This scope narrowed to `notes` (None: unchanged)."""
        return self if notes is None else Scope(self.prefix, self.glob, notes)

    def accepts(self, rel: str) -> bool:
        if self.prefix and not rel.startswith(self.prefix + "/"):
            return False
        if self.notes is not None and rel not in self.notes:
            return False
        match = compile_glob(self.glob)
        return match is None or match(rel)

    def sql(self) -> tuple[str, list[Any]]:
        parts: list[str] = ["true"]
        params: list[Any] = []
        if self.notes is not None:
            parts.append("path IN (SELECT unnest(?::VARCHAR[]))")
            params.append(sorted(self.notes))
        if self.prefix:
            parts.append("starts_with(path, ?)")
            params.append(self.prefix + "/")
        rx = glob_sql_regex(self.glob)
        if rx is not None:
            target = "regexp_extract(path, '[^/]*$')" if rx[1] else "path"
            parts.append(f"regexp_matches({target}, ?, 'i')")
            params.append(rx[0])
        return " AND ".join(parts), params


def resolve_scope(vault: Vault, relative_dir: str | None, glob: str | None) -> Scope:
    """Raises: InvalidPath, Forbidden, NotFound for a bad folder; InvalidParameter for a bad glob."""
    compile_glob(glob)
    rel = normalize_rel_path(relative_dir or "", allow_root=True)
    vault.check_not_protected(rel)
    if not rel:
        return Scope("", glob)
    resolved = vault.resolve(rel)
    if not resolved.is_dir:
        raise InvalidPath(f"'{display(resolved.rel)}' is a file, not a folder")
    return Scope(resolved.rel, glob)
