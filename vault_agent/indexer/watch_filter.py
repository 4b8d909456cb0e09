"""Which watcher events become hints: the filter half of watching (cf. watchfiles' filters.py).

A `NoteFilter` answers, for one raw path the observer reported, the vault-relative path
to hint or None to drop it. Dropped: paths outside the vault, undecodable names, excluded
and protected paths, files that are not notes (editor temp files, vim's `4913` probe,
`*.swp`, `*~`, our own `.vault-agent-tmp-*` files) and folder modifications (a folder's
mtime changes with every save inside it; the save itself is reported). The disk decides at
build time, so a hint that passes here is only a reason to look, never a fact. `.base` files
(Obsidian Bases) pass too: the snapshot records them (indexer/base_files.py).
"""

from __future__ import annotations

import os

from vault_agent.indexer.base_files import is_base_name
from vault_agent.paths import Vault
from vault_agent.text import nfc

# Event types that never change a file: opening and closing without writing.
IGNORED_EVENT_TYPES = frozenset({"opened", "closed_no_write"})


def to_rel(vault: Vault, abs_path: str | bytes) -> str | None:
    """Vault-relative NFC path of a watchdog path, or None (outside, undecodable, root)."""
    if isinstance(abs_path, bytes):
        try:
            abs_path = abs_path.decode()
        except UnicodeDecodeError:
            return None
    root = str(vault.root)
    if not abs_path.startswith(root + os.sep):
        return None
    rel = abs_path[len(root) + 1 :].replace(os.sep, "/").strip("/")
    if not rel or any(0xD800 <= ord(ch) <= 0xDFFF for ch in rel):
        return None
    return nfc(rel)


class NoteFilter:
    """Decides which observed paths are hints for the writer (see module doc)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def __call__(self, event_type: str, abs_path: str | bytes, is_dir: bool) -> str | None:
        """The vault-relative path to hint for this event, or None to drop it."""
        if event_type in IGNORED_EVENT_TYPES or (is_dir and event_type == "modified"):
            return None
        rel = to_rel(self.vault, abs_path)
        if rel is None:
            return None
        if not is_dir and not self.vault.is_note_name(rel) and not is_base_name(rel):
            return None
        if self.vault.exclusions.excluded(rel, is_dir) or self.vault.is_protected(rel):
            return None
        return rel
