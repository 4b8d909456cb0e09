"""Descriptor-relative I/O under the vault root: the root's handle and the descent through
folders that every resolution (resolution.py) and read (file_read.py) starts with.

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

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vault_agent.errors import InvalidPath, NotFound, VaultUnavailable
from vault_agent.paths.rules import Match, display
from vault_agent.text import nfc

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


def not_found(rel: str) -> NotFound:
    """The NotFound of a path the caller gave (its text only, never the root)."""
    return NotFound(f"'{display(rel)}' does not exist in the vault")


def lookup(dir_fd: int, name: str, match: Match) -> str | None:
    """The on-disk name in dir_fd equal to `name` under `match`, or None (also when ambiguous)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return name
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.EILSEQ):
            return None
        raise
    if match == "exact":
        return None
    want = nfc(name).casefold() if match == "casefold" else nfc(name)
    hits = []
    for entry in os.listdir(dir_fd):
        key = nfc(entry).casefold() if match == "casefold" else nfc(entry)
        if key == want:
            hits.append(entry)
    return hits[0] if len(hits) == 1 else None


class DescriptorIO:
    """The vault root's handle: open it, know which folder it is, descend from it through
    folders without following links (what resolution.py and file_read.py build on)."""

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

    def walk_dirs(
        self, parts: list[str], match: Match, original: str, *, create: bool = False, missing: str = ""
    ) -> tuple[int, list[str]]:
        """Open each directory component without following links; returns (fd, raw names).

        With `create`, a missing component is made (mkdir relative to its parent's fd).
        `missing` is the NotFound message (default: the path does not exist).
        """
        fd = self.open_root()
        raw: list[str] = []
        try:
            for part in parts:
                found = lookup(fd, part, match)
                if found is None:
                    if not create:
                        raise NotFound(missing) if missing else not_found(original)
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                    found = part
                try:
                    nfd = os.open(found, DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # EMLINK: BSD's ELOOP
                        raise InvalidPath(
                            f"'{display(original)}' passes through a symbolic link or a file"
                        ) from None
                    if exc.errno == errno.ENOENT:  # renamed or removed meanwhile
                        raise NotFound(missing) if missing else not_found(original) from None
                    raise
                os.close(fd)
                fd = nfd
                raw.append(found)
        except BaseException:
            os.close(fd)
            raise
        return fd, raw

    def abspath(self, resolved: Resolved) -> Path:
        """Absolute path for internal I/O only; never put it in a message or a log."""
        return self.root.joinpath(*resolved.raw_parts)


def stat_leaf(fd: int, leaf: str, match: Match, rel: str) -> tuple[str, os.stat_result]:
    """The raw name of `leaf` in the open folder `fd` and its lstat (NotFound when nothing
    matches or it was removed between the listing and the stat)."""
    name = lookup(fd, leaf, match)
    if name is None:
        raise not_found(rel)
    try:
        return name, os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        raise not_found(rel) from None
