"""Descriptor-relative I/O under the vault root: the root's handle (`DescriptorIO`), from
which every resolution (resolution.py, the descent through folders) and read
(file_read.py) starts.

Symlinks are never followed: every component is opened relative to its checked parent
directory with O_NOFOLLOW, so a component swapped for a link between check and use fails
instead of escaping (the final pattern of the MCP filesystem server advisories). Only
regular files and directories are served: FIFOs, sockets, devices and files with several
hard links (the other name may lie outside the vault) are refused. Reads resolve case- and
normalization-insensitively when exactly one entry matches; writes only accept the same
name up to Unicode normalization, never another case.
Errors name only the vault-relative path the caller gave, never the root.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vault_agent.errors import VaultUnavailable

# The flags every descriptor-relative open uses (shared with files/ and query/ listings).
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO for reading must not hang until a writer appears.
FILE_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Resolved:
    """A path that exists under the vault: its canonical text and its on-disk components."""

    rel: str
    raw_parts: tuple[str, ...]
    is_dir: bool


class DescriptorIO:
    """The vault root's handle: open it, know which folder it is (resolution.py and
    file_read.py descend from it through folders without following links)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(os.path.realpath(root))

    def open_root(self) -> int:
        """A descriptor on the vault root; the caller closes it.

        Raises:
            VaultUnavailable: the root folder is gone (moved, deleted, unmounted).
        """
        try:
            return os.open(self.root, DIR_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            raise VaultUnavailable() from None

    def root_identity(self) -> tuple[int, int] | None:
        """(device, inode) of the folder at the root path now, or None when there is none.

        The writer compares it over time: another identity means the folder was replaced
        (renamed away and a new one made, a restored backup), which a watch on the old
        folder would never see."""
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None

    def require_root(self) -> tuple[int, int]:
        """The root folder's identity (the start of a build).

        Raises:
            VaultUnavailable: the folder is gone.
        """
        identity = self.root_identity()
        if identity is None:
            raise VaultUnavailable()
        return identity

    def check_same_root(self, before: tuple[int, int]) -> None:
        """Raises: VaultUnavailable when the root folder is gone or another one took its path."""
        now = self.root_identity()
        if now == before:
            return
        if now is None:
            raise VaultUnavailable()
        raise VaultUnavailable(
            "the vault folder was replaced by another folder while indexing; nothing was "
            "committed. Run the command again (a running server rescans by itself)"
        )

    def abspath(self, resolved: Resolved) -> Path:
        """Absolute path for internal I/O only; never put it in a message or a log."""
        return self.root.joinpath(*resolved.raw_parts)
