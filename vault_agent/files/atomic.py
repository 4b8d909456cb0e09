"""Crash-safe file replacement relative to an already checked parent directory fd.

Pattern (RELIABILITY.md §1): temp file in the same directory, created with O_EXCL and
O_NOFOLLOW → write → fsync(file) → rename over the target → fsync(dir). A crash at any
instant leaves the old bytes or the new bytes under the target name, never a mix.
Temp names start with `TEMP_PREFIX` so the watcher and the scan can ignore them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable

from vault_agent.errors import Conflict, InvalidPath, TooLarge
from vault_agent.files.swap import (
    RENAME_NOREPLACE,
    ChangedAfterWrite,
    Original,
    RenameUnsupported,
    renameat2,
    swap_in,
    take_read_lease,
)
from vault_agent.paths import FILE_READ_FLAGS, display

TEMP_PREFIX = ".vault-agent-tmp-"
MAX_FILE_BYTES = 16 * 1024 * 1024  # read-modify-write cap: larger files are refused (TOO_LARGE)

_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def is_temp_name(name: str) -> bool:
    """True for our own temp files (the watcher ignores them)."""
    return name.startswith(TEMP_PREFIX)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def open_original(
    dir_fd: int, leaf: str, rel: str, max_bytes: int = MAX_FILE_BYTES, *, guard: bool = False
) -> Original | None:
    """Open and read `leaf` in `dir_fd`, keeping it open; None when it does not exist.

    `guard`: hold a read lease from before the read (see `files.swap.Original`).

    Raises:
        Conflict: `guard` and another program has the file open for writing (a save in
            progress).
        InvalidPath: the entry is a symlink, a folder or a special file.
        TooLarge: the file is larger than `max_bytes`.
    """
    try:
        fd = os.open(leaf, FILE_READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENOTDIR):
            raise InvalidPath(f"'{display(rel)}' is not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder, not a file" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise InvalidPath(f"'{display(rel)}' is {kind}")
        leased = False
        if guard:
            try:
                leased = take_read_lease(fd)
            except BlockingIOError:
                raise Conflict(
                    f"'{display(rel)}' is being saved by another program right now; nothing was "
                    "written. Read it again and retry"
                ) from None
        too_large = f"'{display(rel)}' is larger than {max_bytes} bytes; vault-agent does not rewrite it"
        if st.st_size > max_bytes:
            raise TooLarge(too_large)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max(65536, st.st_size + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise TooLarge(too_large)
    except BaseException:
        os.close(fd)
        raise
    return Original(fd, b"".join(chunks), st.st_ino, st.st_dev, leased)


def read_current(dir_fd: int, leaf: str, rel: str, max_bytes: int = MAX_FILE_BYTES) -> bytes | None:
    """The current bytes of `leaf` in `dir_fd`, or None when it does not exist.

    Raises:
        InvalidPath: the entry is a symlink, a folder or a special file.
        TooLarge: the file is larger than `max_bytes`.
    """
    original = open_original(dir_fd, leaf, rel, max_bytes)
    if original is None:
        return None
    original.close()
    return original.data


def entry_mode(dir_fd: int, leaf: str) -> int | None:
    """Permission bits of an existing regular file (kept across a replace), else None."""
    try:
        st = os.stat(leaf, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def fsync_dir(dir_fd: int) -> None:
    """Make a rename durable (rename is atomic but not durable without it)."""
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def rename_noreplace(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
    """Rename that never overwrites: renameat2(RENAME_NOREPLACE), else check-then-rename.

    Raises:
        FileExistsError: the destination exists.
    """
    try:
        renameat2(src_dir_fd, src, dst_dir_fd, dst, RENAME_NOREPLACE)
        return
    except RenameUnsupported:
        pass
    try:  # fallback for file systems without RENAME_NOREPLACE: a small race, documented
        os.stat(dst, dir_fd=dst_dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        return
    raise FileExistsError(errno.EEXIST, "destination exists")


def write_temp(dir_fd: int, data: bytes, mode: int | None) -> tuple[str, int]:
    """A durable temp file holding `data`; returns its name and an open read-write fd."""
    for _ in range(8):
        name = TEMP_PREFIX + secrets.token_hex(16)
        try:
            fd = os.open(name, _TEMP_FLAGS, 0o644, dir_fd=dir_fd)  # O_RDWR: read back later
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 128 random bits colliding 8 times
        raise FileExistsError(errno.EEXIST, "could not create a temp file")
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise
    return name, fd


def replace_atomic(
    dir_fd: int,
    leaf: str,
    rel: str,
    data: bytes,
    *,
    must_not_exist: bool = False,
    precheck: Callable[[], None] | None = None,
    original: Original | None = None,
) -> None:
    """Atomically make `leaf` hold `data` (see `files.swap` for the compare-and-swap).

    With `original` (the still-open file the caller read), the new bytes replace exactly
    those bytes or nothing is written: the swap hands back what was replaced and a changed
    original is swapped back. `precheck` runs right before the swap or rename (a cheap
    early abort with nothing replaced).

    Raises:
        Conflict: `must_not_exist` and the target appeared, the folder vanished, or the
            file changed since `original` was read (nothing was written).
        ChangedAfterWrite: our own new file does not read back as `data`.
    """
    try:
        name, temp_fd = write_temp(dir_fd, data, entry_mode(dir_fd, leaf))
    except FileNotFoundError:
        # The folder held by dir_fd was removed meanwhile (e.g. replaced by a rename): the
        # write has nowhere to go, which is a changed precondition, not an internal error.
        raise Conflict(
            f"the folder of '{display(rel)}' was moved or deleted while writing; nothing was written"
        ) from None
    try:
        try:
            # Verified before the swap: once under the note's name an editor may save into
            # this very inode, which is a later edit, not a failed write.
            verify_fd(temp_fd, rel, data)
            if precheck is not None:
                precheck()
            if must_not_exist:
                try:
                    rename_noreplace(dir_fd, name, dir_fd, leaf)
                except FileExistsError:
                    raise Conflict(f"'{display(rel)}' already exists; nothing was written") from None
            elif original is None:
                os.replace(name, leaf, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            elif not swap_in(dir_fd, name, leaf, rel, temp_fd, original):
                # No RENAME_EXCHANGE on this file system: the precheck above was the last
                # check before a plain rename (a small window, documented in docs/writes.md).
                os.replace(name, leaf, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except ChangedAfterWrite:
            raise  # swap_in already undid the swap and cleaned up; the temp name is not ours
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            raise
        fsync_dir(dir_fd)
    finally:
        os.close(temp_fd)


def verify_fd(fd: int, rel: str, data: bytes) -> None:
    """Re-read the inode we wrote (not the name: an editor may save over it at once).

    Raises:
        ChangedAfterWrite: the file system does not hand back the bytes we wrote.
    """
    got = os.pread(fd, len(data) + 1, 0) if data else os.pread(fd, 1, 0)
    if len(got) != len(data) or sha256_hex(got) != sha256_hex(data):
        raise ChangedAfterWrite(
            f"'{display(rel)}' did not read back as written (another program wrote it at once); "
            "read it again before retrying"
        )
