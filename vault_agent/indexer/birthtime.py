"""A file's birth (creation) time, as Obsidian reads it for `file.ctime`.

Obsidian takes Node's `birthtime`, which libuv gets from `statx(STATX_BTIME)` on Linux and
from the stat call elsewhere. Python 3.11's `os.stat` has `st_birthtime` on macOS and the
BSDs only, so on Linux this asks `statx` itself (glibc ≥ 2.28, through ctypes). Where the
file system keeps no birth time (or the call is missing), the answer is the earlier of
the inode change time and the modification time: on Linux that is in practice the mtime,
on Windows (where Python 3.11's `st_ctime` is the creation time) the creation time.

A save by rename (write a temporary file, rename it over the note: many editors, and
vault-agent's own writes) gives the note a new birth time; Obsidian shows the same.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
from typing import Any

_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_BTIME = 0x800
_STATX_SIZE = 256  # sizeof(struct statx)
_BTIME_OFFSET = 80  # stx_btime: after mask, blksize, attributes, nlink, uid, gid, mode, ino, size, blocks, attributes_mask, atime
_MASK = struct.Struct("=I")
_STAMP = struct.Struct("=qI")  # tv_sec (s64), tv_nsec (u32)


def _load_statx() -> Any | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.statx
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


_STATX = _load_statx()
_BUFFERS = threading.local()  # one statx buffer per thread, reused note after note


def _statx_btime_ns(path: str) -> int | None:
    if _STATX is None:
        return None
    buf = getattr(_BUFFERS, "buf", None)
    if buf is None:
        buf = _BUFFERS.buf = ctypes.create_string_buffer(_STATX_SIZE)
    if _STATX(_AT_FDCWD, os.fsencode(path), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:
        return None
    raw = buf.raw
    if not _MASK.unpack_from(raw, 0)[0] & _STATX_BTIME:
        return None  # the file system keeps no birth time
    sec, nsec = _STAMP.unpack_from(raw, _BTIME_OFFSET)
    return int(sec) * 1_000_000_000 + int(nsec)


def birth_time_ns(path: str, st: os.stat_result) -> int:
    """The birth time of the file at `path` (absolute; never logged), whose stat is `st`.

    Never raises: without a birth time, the earlier of st_ctime and st_mtime (module doc).
    """
    birth = getattr(st, "st_birthtime", None)
    if isinstance(birth, float | int) and birth > 0:
        return int(birth * 1_000_000_000)
    try:
        found = _statx_btime_ns(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path (never a note's)
        found = None
    if found is not None and found > 0:
        return found
    return min(st.st_ctime_ns, st.st_mtime_ns)
