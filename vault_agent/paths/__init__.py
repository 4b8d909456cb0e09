"""Vault paths: one place that turns caller text into a file under the vault root.

Three parts, each with one job (docs/architecture.md):
- `paths.rules`: pure rules, no I/O: normalization of caller text, exclusions, protected
  folders, note names;
- descriptor-relative I/O, never following a link: `paths.descriptor_io` (the root's
  handle `DescriptorIO`), `paths.resolution` (the descent through folders, resolving,
  stats, opening a folder or a write's parent folder) and `paths.file_read` (reads);
- `paths.walk`: the walk over every indexable file.
`Vault` is the handle the other packages hold: it binds one root and one set of rules to
those parts and does no work of its own. The names other packages import stay importable
from `vault_agent.paths`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from vault_agent.paths import file_read, resolution
from vault_agent.paths.descriptor_io import DIR_FLAGS, FILE_READ_FLAGS, DescriptorIO, Resolved
from vault_agent.paths.rules import (
    DAILY_DIR,
    Exclusions,
    Match,
    PathRules,
    display,
    has_surrogates,
    is_daily,
    is_protected,
    is_system,
    normalize_rel_path,
    top_folder,
)
from vault_agent.paths.walk import WalkEntry, WalkReport, walk_vault
from vault_agent.text import nfc

if TYPE_CHECKING:
    from vault_agent.config import Settings

__all__ = [
    "DAILY_DIR",
    "DIR_FLAGS",
    "FILE_READ_FLAGS",
    "Exclusions",
    "Resolved",
    "Vault",
    "WalkEntry",
    "WalkReport",
    "display",
    "exists_exactly",
    "has_surrogates",
    "is_daily",
    "is_protected",
    "is_system",
    "normalize_rel_path",
    "top_folder",
    "vault_for_settings",
]


class Vault:
    """The vault handle: its root, its `PathRules` and its `DescriptorIO`, bound together.

    Every method forwards to the part that owns the job, so callers hold one object.
    """

    def __init__(
        self,
        root: Path | str,
        exclusions: Exclusions | None = None,
        extensions: tuple[str, ...] = (".md",),
        extra_protected: frozenset[str] = frozenset(),
        protected_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.io = DescriptorIO(root)
        self.rules = PathRules(exclusions, extensions, extra_protected, protected_paths)

    @property
    def root(self) -> Path:
        return self.io.root

    @property
    def exclusions(self) -> Exclusions:
        return self.rules.exclusions

    @property
    def extensions(self) -> tuple[str, ...]:
        return self.rules.extensions

    # ----- pure rules (paths.rules) -------------------------------------------------------
    def is_note_name(self, rel: str) -> bool:
        """See `PathRules.is_note_name`."""
        return self.rules.is_note_name(rel)

    def is_protected(self, rel: str) -> bool:
        """See `PathRules.is_protected`."""
        return self.rules.is_protected(rel)

    def check_not_protected(self, rel: str) -> None:
        """Raises: Forbidden when the path lies in a protected folder."""
        self.rules.check_not_protected(rel)

    # ----- descriptor-relative I/O (paths.resolution, paths.file_read) --------------------
    def resolve(self, rel: str, *, match: Match = "casefold") -> Resolved:
        """Raises: NotFound, InvalidPath (see `resolution.resolve`)."""
        return resolution.resolve(self.io, rel, match=match)

    def case_variants(self, rel: str, limit: int) -> list[str]:
        """See `resolution.case_variants`."""
        return resolution.case_variants(self.io, rel, limit)

    def open_dir(self, raw_parts: tuple[str, ...] | list[str], rel: str) -> int:
        """Raises: InvalidPath, NotFound (see `resolution.open_dir`)."""
        return resolution.open_dir(self.io, raw_parts, rel)

    def lstat(self, resolved: Resolved) -> os.stat_result:
        """Raises: InvalidPath, NotFound (see `resolution.lstat`)."""
        return resolution.lstat(self.io, resolved)

    def read_bytes(self, resolved: Resolved, max_bytes: int | None = None) -> bytes:
        """Raises: InvalidPath, NotFound (see `file_read.read_bytes`)."""
        return file_read.read_bytes(self.io, resolved, max_bytes)

    def read_with_stat(
        self, rel: str, *, match: Match = "normalized"
    ) -> tuple[Resolved, os.stat_result, bytes]:
        """Raises: NotFound, InvalidPath (see `file_read.read_with_stat`)."""
        return file_read.read_with_stat(self.io, rel, match=match)

    def open_parent(self, rel: str, *, create: bool = False) -> tuple[int, str, str]:
        """Raises: InvalidPath, NotFound (see `resolution.open_parent`)."""
        return resolution.open_parent(self.io, rel, create=create)

    def abspath(self, resolved: Resolved) -> Path:
        """Absolute path for internal I/O only; never put it in a message or a log."""
        return self.io.abspath(resolved)

    # ----- the walk (paths.walk) ----------------------------------------------------------
    def walk(
        self, report: WalkReport | None = None, notes_only: bool = True, also: tuple[str, ...] = ()
    ) -> Iterator[WalkEntry]:
        """See `paths.walk.walk_vault`."""
        return walk_vault(self.io.root, self.rules, report, notes_only, also)


def exists_exactly(vault: Vault, rel: str) -> bool:
    """True when `rel` names an existing file or folder exactly as spelled (no case folding)."""
    return resolution.exists_exactly(vault.io, rel)


def vault_for_settings(settings: Settings) -> Vault:
    """The Vault of a settings object, with the state dir excluded when it lies inside."""
    extra = settings.index_dir_in_vault()
    state = frozenset({nfc(extra)}) if extra else frozenset()
    return Vault(
        settings.vault,
        Exclusions(settings.exclude, extra_paths=state),
        settings.extensions,
        protected_paths=state,
    )
