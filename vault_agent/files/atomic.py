"""Crash-safe file replacement relative to an already checked parent directory fd.

Pattern (RELIABILITY.md §1): temp file in the same directory, created with O_EXCL and
O_NOFOLLOW → write → fsync(file) → rename over the target → fsync(dir). A crash at any
instant leaves the old bytes or the new bytes under the target name, never a mix.
Temp names start with `TEMP_PREFIX` so the watcher and the scan can ignore them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable

from vault_agent.errors import Conflict, InvalidPath, TooLarge
from vault_agent.paths import display

TEMP_PREFIX = ".vault-agent-tmp-"
MAX_FILE_BYTES = 16 * 1024 * 1024  # read-modify-write cap: larger files are refused (TOO_LARGE)

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_RENAME_NOREPLACE = 1

try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
    _renameat2 = getattr(_LIBC, "renameat2", None)
except OSError:  # pragma: no cover - non-glibc platforms
    _LIBC = None
    _renameat2 = None


class ChangedAfterWrite(Conflict):
    """The read-back differs: our bytes were renamed in, then another program wrote."""


def is_temp_name(name: str) -> bool:
    """True for our own temp files (the watcher ignores them)."""
    return name.startswith(TEMP_PREFIX)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_current(dir_fd: int, leaf: str, rel: str, max_bytes: int = MAX_FILE_BYTES) -> bytes | None:
    """The current bytes of `leaf` in `dir_fd`, or None when it does not exist.

    Raises:
        InvalidPath: the entry is a symlink, a folder or a special file.
        TooLarge: the file is larger than `max_bytes`.
    """
    try:
        fd = os.open(leaf, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENOTDIR):
            raise InvalidPath(f"'{display(rel)}' is not a regular file") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a folder, not a file" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InvalidPath(f"'{display(rel)}' is {kind}")
    if st.st_size > max_bytes:
        os.close(fd)
        raise TooLarge(f"'{display(rel)}' is larger than {max_bytes} bytes; vault-agent does not rewrite it")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise TooLarge(f"'{display(rel)}' is larger than {max_bytes} bytes; vault-agent does not rewrite it")
    return data


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
    if _renameat2 is not None:
        res = _renameat2(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), _RENAME_NOREPLACE)
        if res == 0:
            return
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise FileExistsError(err, "destination exists")
        if err not in (errno.ENOSYS, errno.EINVAL):
            raise OSError(err, os.strerror(err))
    try:  # fallback for file systems without RENAME_NOREPLACE: a small race, documented
        os.stat(dst, dir_fd=dst_dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        return
    raise FileExistsError(errno.EEXIST, "destination exists")


def _write_temp(dir_fd: int, data: bytes, mode: int | None) -> str:
    for _ in range(8):
        name = TEMP_PREFIX + secrets.token_hex(16)
        try:
            fd = os.open(name, _TEMP_FLAGS, 0o644, dir_fd=dir_fd)
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
    os.close(fd)
    return name


def replace_atomic(
    dir_fd: int,
    leaf: str,
    rel: str,
    data: bytes,
    *,
    must_not_exist: bool = False,
    precheck: Callable[[], None] | None = None,
) -> None:
    """Atomically make `leaf` hold `data`, then verify size and hash by reading it back.

    `precheck` runs after the temp file is durable and right before the rename (the
    last moment to notice a concurrent change and abort with nothing replaced).

    Raises:
        Conflict: `must_not_exist` and the target appeared, the folder vanished, or the
            read-back differs.
    """
    try:
        name = _write_temp(dir_fd, data, entry_mode(dir_fd, leaf))
    except FileNotFoundError:
        # The folder held by dir_fd was removed meanwhile (e.g. replaced by a rename): the
        # write has nowhere to go, which is a changed precondition, not an internal error.
        raise Conflict(
            f"the folder of '{display(rel)}' was moved or deleted while writing; nothing was written"
        ) from None
    try:
        if precheck is not None:
            precheck()
        if must_not_exist:
            try:
                rename_noreplace(dir_fd, name, dir_fd, leaf)
            except FileExistsError:
                raise Conflict(f"'{display(rel)}' already exists; nothing was written") from None
        else:
            os.replace(name, leaf, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise
    fsync_dir(dir_fd)
    verify(dir_fd, leaf, rel, data)


def verify(dir_fd: int, leaf: str, rel: str, data: bytes) -> None:
    """Re-read the target and compare size and sha256 with what was meant to be written.

    Raises:
        Conflict: the file on disk differs (another program wrote it in the meantime).
    """
    got = read_current(dir_fd, leaf, rel, max_bytes=max(MAX_FILE_BYTES, len(data)))
    if got is None or len(got) != len(data) or sha256_hex(got) != sha256_hex(data):
        raise ChangedAfterWrite(
            f"'{display(rel)}' changed right after vault-agent wrote it (another program edited it); "
            "read it again before retrying"
        )
