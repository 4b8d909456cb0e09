"""Compare-and-swap of a file: the agent's bytes replace exactly the bytes it read, or nothing.

A check followed by a rename always leaves a window in which an editor's save can land and
be overwritten. On Linux `renameat2(RENAME_EXCHANGE)` closes it: the new file is swapped in
and the replaced file comes back under the temp name, so we can look at exactly what was
replaced. It must be the inode the caller read (`Original`), still holding the bytes read:

- another inode came back → an editor saved by temp+rename before the swap;
- the same inode with other bytes → an editor saved in place (truncate + write).

Either way the swap is undone (`swap_back`) and the caller answers `CONFLICT`: nothing of
ours stays under the name. Residual window, documented: an in-place writer that had the
file open *without* truncating before the swap and writes only after the comparison writes
into the replaced inode; `O_TRUNC` saves (the usual in-place kind) are seen because the
truncation itself changes the inode.

Where the kernel or file system lacks RENAME_EXCHANGE (ENOSYS/EINVAL: other OSes, some
network file systems) `swap_in` says so and the caller falls back to re-check + rename.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import logging
import os
import signal
from dataclasses import dataclass

from vault_agent.errors import Conflict
from vault_agent.paths import display

log = logging.getLogger("vault_agent.files")

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)
_SWAP_BACK_ROUNDS = 16  # each round needs another editor save within microseconds

try:
    _renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
except OSError:  # pragma: no cover - non-glibc platforms
    _renameat2 = None


class ChangedAfterWrite(Conflict):
    """Another program saved the file while we wrote it: the swap was undone, nothing of
    ours is under the name (or, without RENAME_EXCHANGE, our inode did not read back)."""


class RenameUnsupported(OSError):
    """The kernel or file system lacks renameat2 or the requested flag."""


@dataclass
class Original:
    """The file a write was computed from, kept open so the swap can compare against it.

    `leased`: a read lease (fcntl F_SETLEASE F_RDLCK) is held on `fd`. While it is held,
    any other open of this inode for writing or truncation blocks in the kernel until we
    close `fd`, and the lease turns to "breaking" — so an in-place save that started
    after our read is seen even before it has written a byte, and its bytes land in the
    inode that is then under the note's name.
    """

    fd: int
    data: bytes
    ino: int
    dev: int
    leased: bool = False

    def unchanged(self) -> bool:
        """True when the open inode still holds exactly `data` (no in-place save since)."""
        if self.leased and fcntl.fcntl(self.fd, fcntl.F_GETLEASE) != fcntl.F_RDLCK:
            return False  # someone opened it for writing since our read (blocked on us)
        if os.fstat(self.fd).st_size != len(self.data):
            return False
        return os.pread(self.fd, len(self.data) + 1, 0) == self.data

    def close(self) -> None:
        """Release the descriptor and the lease with it (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def take_read_lease(fd: int) -> bool:
    """Hold a read lease on `fd`; False where leases are unavailable (not the owner
    without CAP_LEASE, a network file system, leases disabled).

    Raises:
        BlockingIOError: another program has the file open for writing right now.
    """
    try:
        # The break notice must not be SIGIO (its default action ends the process):
        # SIGURG is ignored by default and nothing in the product handles it.
        fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except BlockingIOError:
        raise
    except OSError:
        return False
    return True


def renameat2(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, flags: int) -> None:
    """renameat2(2) through libc.

    Raises:
        RenameUnsupported: no renameat2, or the flag is not supported here.
        FileExistsError: RENAME_NOREPLACE and `dst` exists.
        OSError: anything else from the kernel (ENOENT when a name is missing).
    """
    if _renameat2 is None:
        raise RenameUnsupported(errno.ENOSYS, "renameat2 is not available")
    if _renameat2(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), flags) == 0:
        return
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        raise RenameUnsupported(err, os.strerror(err))
    if err == errno.EEXIST:
        raise FileExistsError(err, "destination exists")
    if err == errno.ENOENT:
        raise FileNotFoundError(err, "no such entry")
    raise OSError(err, os.strerror(err))


def exchange(dir_fd: int, a: str, b: str) -> None:
    """Atomically swap the entries `a` and `b` of one folder (see `renameat2`)."""
    renameat2(dir_fd, a, dir_fd, b, RENAME_EXCHANGE)


def _ino(dir_fd: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino
    except FileNotFoundError:
        return None


def swap_in(dir_fd: int, temp: str, leaf: str, rel: str, temp_fd: int, original: Original) -> bool:
    """Swap the durable temp file in for `leaf` if `leaf` is still exactly `original`.

    Returns False (nothing done) when RENAME_EXCHANGE is unavailable. On success the
    replaced original is unlinked and True returned.

    Raises:
        ChangedAfterWrite: `leaf` changed since `original` was read; swapped back, nothing
            of ours is left under the name.
    """
    try:
        exchange(dir_fd, temp, leaf)
    except RenameUnsupported:
        return False
    except FileNotFoundError:
        raise ChangedAfterWrite(
            f"'{display(rel)}' was deleted or moved while vault-agent was writing it; nothing was written"
        ) from None
    ours = os.fstat(temp_fd).st_ino
    if _ino(dir_fd, temp) == original.ino and original.unchanged():
        os.unlink(temp, dir_fd=dir_fd)  # the replaced original: exactly the bytes we read
        return True
    swap_back(dir_fd, temp, leaf, ours)
    raise ChangedAfterWrite(
        f"'{display(rel)}' was saved by another program while vault-agent was writing it; "
        "nothing was written. Read it again and retry"
    )


def swap_back(dir_fd: int, temp: str, leaf: str, ours: int) -> None:
    """Undo a swap so `leaf` holds the newest file that is not ours; delete the rest.

    Each exchange pulls out of `leaf` what is there now. If that is what we expected to
    find (our file first, later the file we pushed back), `leaf` holds the newest save and
    the pulled file is ours or superseded: delete it. Otherwise an editor saved over `leaf`
    in between and we pulled out its newer save: push that back next round.
    """
    expected = ours
    for _ in range(_SWAP_BACK_ROUNDS):
        pushed = _ino(dir_fd, temp)
        try:
            exchange(dir_fd, temp, leaf)
        except FileNotFoundError:
            # `leaf` (holding ours) was deleted meanwhile: put the displaced file back
            # unless a newer file appeared, which then supersedes it.
            try:
                renameat2(dir_fd, temp, dir_fd, leaf, RENAME_NOREPLACE)
            except FileExistsError:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=dir_fd)
            return
        if _ino(dir_fd, temp) == expected:
            os.unlink(temp, dir_fd=dir_fd)
            return
        expected = pushed if pushed is not None else ours
    # Never reached unless an editor saves continuously within microseconds: keep every
    # file (the temp name is ignored by the index) rather than delete someone's save.
    log.warning("swap back did not settle; a .vault-agent-tmp file was left in place")
