"""Descriptor-relative I/O under the vault root: resolve, stat, read, open for a write.

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


def _missing(rel: str) -> NotFound:
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
    """Opens, stats and reads paths relative to the vault root's directory descriptor."""

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

    def _walk_dirs(
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
                        raise NotFound(missing) if missing else _missing(original)
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
                        raise NotFound(missing) if missing else _missing(original) from None
                    raise
                os.close(fd)
                fd = nfd
                raw.append(found)
        except BaseException:
            os.close(fd)
            raise
        return fd, raw

    def resolve(self, rel: str, *, match: Match = "casefold") -> Resolved:
        """Find an existing file or folder under the vault without following links.

        Raises:
            NotFound: nothing (or more than one case-variant) matches.
            InvalidPath: a component is a symlink, or the target is not a regular file/folder.
        """
        if not rel:
            return Resolved("", (), True)
        try:
            return self._resolve_parts(rel, match)
        except NotFound:
            if match != "casefold":
                raise
            # Component by component, an exact folder hides its case twin ("CSS x/b.md" when
            # b.md lives only in "css x/"): the path still names exactly one file, so look
            # at whole paths. Exact matches were tried first, so a twin is never preferred
            # over a path that exists as typed.
            hits = self._casefold_paths(rel.split("/"))
            if len(hits) != 1:
                raise
            return self._resolve_parts("/".join(hits[0]), "exact")

    def case_variants(self, rel: str, limit: int) -> list[str]:
        """Every existing path equal to `rel` under casefold (at most `limit`), NFC, sorted:
        what a case-insensitive read that refuses to guess lists as its candidates."""
        if not rel:
            return []
        return sorted("/".join(nfc(p) for p in raw) for raw in self._casefold_paths(rel.split("/"), limit))

    def _casefold_paths(self, parts: list[str], limit: int = 2) -> list[tuple[str, ...]]:
        """On-disk spellings of every existing path equal to `parts` under casefold (max `limit`)."""
        found: list[tuple[str, ...]] = []

        def visit(fd: int, index: int, raw: tuple[str, ...]) -> None:
            want = nfc(parts[index]).casefold()
            for entry in sorted(os.listdir(fd)):
                if len(found) >= limit or nfc(entry).casefold() != want:
                    continue
                if index == len(parts) - 1:
                    found.append((*raw, entry))
                    continue
                try:
                    sub = os.open(entry, DIR_FLAGS, dir_fd=fd)
                except OSError:  # a file, a link or gone: not a folder on the way
                    continue
                try:
                    visit(sub, index + 1, (*raw, entry))
                finally:
                    os.close(sub)

        root = self.open_root()
        try:
            visit(root, 0, ())
        finally:
            os.close(root)
        return found

    def _resolve_parts(self, rel: str, match: Match) -> Resolved:
        parts = rel.split("/")
        fd, raw = self._walk_dirs(parts[:-1], match, rel)
        try:
            name, st = _leaf(fd, parts[-1], match, rel)
        finally:
            os.close(fd)
        if stat.S_ISLNK(st.st_mode):
            raise InvalidPath(f"'{display(rel)}' is a symbolic link; vault-agent does not follow links")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise InvalidPath(f"'{display(rel)}' is not a regular file or folder")
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            raise InvalidPath(f"'{display(rel)}' has several hard links; vault-agent does not serve it")
        raw_parts = (*raw, name)
        return Resolved("/".join(nfc(p) for p in raw_parts), raw_parts, stat.S_ISDIR(st.st_mode))

    def exists_exactly(self, rel: str) -> bool:
        """True when `rel` names an existing file or folder exactly as spelled (no case folding)."""
        try:
            self.resolve(rel, match="normalized")
        except (NotFound, InvalidPath):
            return False
        return True

    def open_dir(self, raw_parts: tuple[str, ...] | list[str], rel: str) -> int:
        """Open a folder by its on-disk components, never following links; caller closes.

        Raises:
            InvalidPath: a component is a link or a file. NotFound: a component is missing.
        """
        fd, _ = self._walk_dirs(list(raw_parts), "exact", rel)
        return fd

    def lstat(self, resolved: Resolved) -> os.stat_result:
        """Stat a resolved path again, descriptor-relative, never following links.

        Raises:
            InvalidPath: a parent became a link or a file. NotFound: a parent is gone.
        """
        if not resolved.raw_parts:
            try:
                return os.stat(self.root)
            except (FileNotFoundError, NotADirectoryError):
                raise VaultUnavailable() from None
        fd, _ = self._walk_dirs(list(resolved.raw_parts[:-1]), "exact", resolved.rel)
        try:
            return os.stat(resolved.raw_parts[-1], dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def read_bytes(self, resolved: Resolved, max_bytes: int | None = None) -> bytes:
        """Read a regular file, opened with O_NOFOLLOW relative to its checked parent.

        Raises:
            InvalidPath: the file is a link, a folder or a special file.
        """
        if resolved.is_dir:
            raise InvalidPath(f"'{display(resolved.rel)}' is a folder, not a file")
        fd, _ = self._walk_dirs(list(resolved.raw_parts[:-1]), "exact", resolved.rel)
        try:
            try:
                ffd = os.open(resolved.raw_parts[-1], FILE_READ_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                    raise InvalidPath(f"'{display(resolved.rel)}' is not a regular file") from None
                if exc.errno == errno.ENOENT:
                    raise _missing(resolved.rel) from None
                raise
        finally:
            os.close(fd)
        with os.fdopen(ffd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise InvalidPath(f"'{display(resolved.rel)}' is not a regular file")
            # A hard link may name a file outside the vault (RELIABILITY: hardlink probe).
            if st.st_nlink > 1:
                raise InvalidPath(
                    f"'{display(resolved.rel)}' has several hard links; vault-agent does not serve it"
                )
            return fh.read() if max_bytes is None else fh.read(max_bytes)

    def read_with_stat(
        self, rel: str, *, match: Match = "normalized"
    ) -> tuple[Resolved, os.stat_result, bytes]:
        """Resolve a file and read it in one walk of its folders: (resolved, stat, bytes).

        The same checks as `resolve` then `read_bytes` (no link, no special file, no second
        hard link), but the folders are opened once, not once per call; the stat is the
        open file's own (fstat before the read: a racing write leaves a newer mtime).

        Raises:
            NotFound: nothing (or more than one variant) matches. InvalidPath: a component
            is a link, or the target is a folder, a link or not a regular file.
        """
        parts = rel.split("/")
        fd, raw = self._walk_dirs(parts[:-1], match, rel)
        try:
            name, st = _leaf(fd, parts[-1], match, rel)
            try:
                # Stat first as `resolve` does: a device or FIFO is refused before any open.
                if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                    raise InvalidPath(f"'{display(rel)}' is not a regular file with one name")
                ffd = os.open(name, FILE_READ_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                    raise InvalidPath(f"'{display(rel)}' is not a regular file") from None
                if exc.errno == errno.ENOENT:
                    raise _missing(rel) from None
                raise
        finally:
            os.close(fd)
        resolved = Resolved("/".join(nfc(p) for p in (*raw, name)), (*raw, name), False)
        with os.fdopen(ffd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # swapped since the stat
                raise InvalidPath(f"'{display(rel)}' is not a regular file with one name")
            return resolved, st, fh.read()

    def open_parent(self, rel: str, *, create: bool = False) -> tuple[int, str, str]:
        """Open the parent folder of `rel` for a write: (dir fd, raw leaf name, canonical rel).

        The leaf name is matched up to Unicode normalization only, never case. With
        `create`, missing parents are made (each with mkdir relative to its parent fd).
        The caller owns the returned fd.

        Raises:
            InvalidPath: a parent is a link or a file. NotFound: a parent is missing.
        """
        parts = rel.split("/")
        missing = f"the folder of '{display(rel)}' does not exist"
        fd, raw = self._walk_dirs(parts[:-1], "normalized", rel, create=create, missing=missing)
        try:
            leaf = lookup(fd, parts[-1], "normalized") or parts[-1]
        except BaseException:
            os.close(fd)
            raise
        return fd, leaf, "/".join(nfc(p) for p in (*raw, leaf))

    def abspath(self, resolved: Resolved) -> Path:
        """Absolute path for internal I/O only; never put it in a message or a log."""
        return self.root.joinpath(*resolved.raw_parts)


def _leaf(fd: int, leaf: str, match: Match, rel: str) -> tuple[str, os.stat_result]:
    """The raw name of `leaf` in the open folder `fd` and its lstat (NotFound when nothing
    matches or it was removed between the listing and the stat)."""
    name = lookup(fd, leaf, match)
    if name is None:
        raise _missing(rel)
    try:
        return name, os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        raise _missing(rel) from None
