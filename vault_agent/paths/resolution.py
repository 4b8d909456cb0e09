"""Resolving caller paths under the vault root, descriptor-relative: find an existing file
or folder (case- and normalization-insensitively when exactly one entry matches), list a
path's case variants, stat a resolved path again, open a folder, open the parent folder of
a path for a write (matched up to Unicode normalization only, never case).

Each function descends from the root's handle (descriptor_io.py) through `walk_dirs`,
which file_read.py's reads use too: every folder is opened relative to its checked parent
with O_NOFOLLOW, so no link is followed; only regular files and folders with one name are
served, and errors name only the vault-relative path the caller gave.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from vault_agent.errors import InvalidPath, NotFound, VaultUnavailable
from vault_agent.paths.descriptor_io import DIR_FLAGS, DescriptorIO, Resolved
from vault_agent.paths.rules import Match, display
from vault_agent.text import nfc


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


def walk_dirs(
    io: DescriptorIO,
    parts: list[str],
    match: Match,
    original: str,
    *,
    create: bool = False,
    missing: str = "",
) -> tuple[int, list[str]]:
    """Open each directory component without following links; returns (fd, raw names).

    With `create`, a missing component is made (mkdir relative to its parent's fd).
    `missing` is the NotFound message (default: the path does not exist).
    """
    fd = io.open_root()
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


def resolve(io: DescriptorIO, rel: str, *, match: Match = "casefold") -> Resolved:
    """Find an existing file or folder under the vault without following links.

    Raises:
        NotFound: nothing (or more than one case-variant) matches.
        InvalidPath: a component is a symlink, or the target is not a regular file/folder.
    """
    if not rel:
        return Resolved("", (), True)
    try:
        return _resolve_parts(io, rel, match)
    except NotFound:
        if match != "casefold":
            raise
        # Component by component, an exact folder hides its case twin ("CSS x/b.md" when
        # b.md lives only in "css x/"): the path still names exactly one file, so look
        # at whole paths. Exact matches were tried first, so a twin is never preferred
        # over a path that exists as typed.
        hits = _casefold_paths(io, rel.split("/"))
        if len(hits) != 1:
            raise
        return _resolve_parts(io, "/".join(hits[0]), "exact")


def case_variants(io: DescriptorIO, rel: str, limit: int) -> list[str]:
    """Every existing path equal to `rel` under casefold (at most `limit`), NFC, sorted:
    what a case-insensitive read that refuses to guess lists as its candidates."""
    if not rel:
        return []
    return sorted("/".join(nfc(p) for p in raw) for raw in _casefold_paths(io, rel.split("/"), limit))


def _casefold_paths(io: DescriptorIO, parts: list[str], limit: int = 2) -> list[tuple[str, ...]]:
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

    root = io.open_root()
    try:
        visit(root, 0, ())
    finally:
        os.close(root)
    return found


def _resolve_parts(io: DescriptorIO, rel: str, match: Match) -> Resolved:
    parts = rel.split("/")
    fd, raw = walk_dirs(io, parts[:-1], match, rel)
    try:
        name, st = stat_leaf(fd, parts[-1], match, rel)
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


def exists_exactly(io: DescriptorIO, rel: str) -> bool:
    """True when `rel` names an existing file or folder exactly as spelled (no case folding)."""
    try:
        resolve(io, rel, match="normalized")
    except (NotFound, InvalidPath):
        return False
    return True


def open_dir(io: DescriptorIO, raw_parts: tuple[str, ...] | list[str], rel: str) -> int:
    """Open a folder by its on-disk components, never following links; caller closes.

    Raises:
        InvalidPath: a component is a link or a file. NotFound: a component is missing.
    """
    fd, _ = walk_dirs(io, list(raw_parts), "exact", rel)
    return fd


def lstat(io: DescriptorIO, resolved: Resolved) -> os.stat_result:
    """Stat a resolved path again, descriptor-relative, never following links.

    Raises:
        InvalidPath: a parent became a link or a file. NotFound: a parent is gone.
    """
    if not resolved.raw_parts:
        try:
            return os.stat(io.root)
        except (FileNotFoundError, NotADirectoryError):
            raise VaultUnavailable() from None
    fd, _ = walk_dirs(io, list(resolved.raw_parts[:-1]), "exact", resolved.rel)
    try:
        return os.stat(resolved.raw_parts[-1], dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)


def open_parent(io: DescriptorIO, rel: str, *, create: bool = False) -> tuple[int, str, str]:
    """Open the parent folder of `rel` for a write: (dir fd, raw leaf name, canonical rel).

    The leaf name is matched up to Unicode normalization only, never case. With
    `create`, missing parents are made (each with mkdir relative to its parent fd).
    The caller owns the returned fd.

    Raises:
        InvalidPath: a parent is a link or a file. NotFound: a parent is missing.
    """
    parts = rel.split("/")
    missing = f"the folder of '{display(rel)}' does not exist"
    fd, raw = walk_dirs(io, parts[:-1], "normalized", rel, create=create, missing=missing)
    try:
        leaf = lookup(fd, parts[-1], "normalized") or parts[-1]
    except BaseException:
        os.close(fd)
        raise
    return fd, leaf, "/".join(nfc(p) for p in (*raw, leaf))
