"""Reading a note's bytes under the vault root, descriptor-relative: the file is opened with
O_NOFOLLOW relative to its checked parent folder, and refused when it is a link, a folder,
a special file (a FIFO is opened non-blocking, so it cannot hang a read) or has several
hard links (the other name may lie outside the vault).
"""

from __future__ import annotations

import errno
import os
import stat

from vault_agent.errors import InvalidPath
from vault_agent.paths.descriptor_io import FILE_READ_FLAGS, DescriptorIO, Resolved
from vault_agent.paths.resolution import not_found, stat_leaf, walk_dirs
from vault_agent.paths.rules import Match, display
from vault_agent.text import nfc


def read_bytes(io: DescriptorIO, resolved: Resolved, max_bytes: int | None = None) -> bytes:
    """Read a regular file, opened with O_NOFOLLOW relative to its checked parent.

    Raises:
        InvalidPath: the file is a link, a folder or a special file.
    """
    if resolved.is_dir:
        raise InvalidPath(f"'{display(resolved.rel)}' is a folder, not a file")
    fd, _ = walk_dirs(io, list(resolved.raw_parts[:-1]), "exact", resolved.rel)
    try:
        try:
            ffd = os.open(resolved.raw_parts[-1], FILE_READ_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise InvalidPath(f"'{display(resolved.rel)}' is not a regular file") from None
            if exc.errno == errno.ENOENT:
                raise not_found(resolved.rel) from None
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
    io: DescriptorIO, rel: str, *, match: Match = "normalized"
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
    fd, raw = walk_dirs(io, parts[:-1], match, rel)
    try:
        name, st = stat_leaf(fd, parts[-1], match, rel)
        try:
            # Stat first as `resolve` does: a device or FIFO is refused before any open.
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                raise InvalidPath(f"'{display(rel)}' is not a regular file with one name")
            ffd = os.open(name, FILE_READ_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise InvalidPath(f"'{display(rel)}' is not a regular file") from None
            if exc.errno == errno.ENOENT:
                raise not_found(rel) from None
            raise
    finally:
        os.close(fd)
    resolved = Resolved("/".join(nfc(p) for p in (*raw, name)), (*raw, name), False)
    with os.fdopen(ffd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # swapped since the stat
            raise InvalidPath(f"'{display(rel)}' is not a regular file with one name")
        return resolved, st, fh.read()
