"""Several files changed all or nothing, each with the write tools' compare-and-swap.

`swap_all(ctx, changes)` (undo's apply): each change names a file, the bytes it must hold
now (None: absent) and the bytes it gets (None: removed to the vault's `.trash/`).

1. Stage every file: open its parent descriptor-relative (no links), open the file with a
   read lease (`open_original(guard=True)`), check it holds the expected bytes, and write
   the new bytes to a durable temp file beside it. No name has changed yet.
2. Swap file by file. RENAME_EXCHANGE puts the new file in and hands back what it replaced
   under the temp name; that must be exactly the file staged against (same inode, same
   bytes, lease unbroken: `files.swap`). A removed file is renamed aside and checked the
   same way; a file that comes back appears with RENAME_NOREPLACE.
3. A check that fails rolls back the files already swapped, newest first, with
   `swap.swap_back`, which keeps any save that landed meanwhile: a person's newer save
   wins over both our versions.
4. Every file swapped: commit (drop the replaced originals, move removed files to the
   trash).

The caller holds the write lock throughout: write tools wait; editors are what the
checks are for. Without RENAME_EXCHANGE (other file systems) a replaced file is kept by a
hard link and re-checked just before the rename (the write tools' documented window).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from vault_agent.errors import Conflict
from vault_agent.files.atomic import (
    TEMP_PREFIX,
    entry_mode,
    fsync_dir,
    open_original,
    rename_noreplace,
    verify_fd,
    write_temp,
)
from vault_agent.files.delete import to_local_trash
from vault_agent.files.models import FilesContext
from vault_agent.files.swap import Original, RenameUnsupported, exchange, swap_back
from vault_agent.paths import display, normalize_rel_path

log = logging.getLogger("vault_agent.files")


@dataclass(frozen=True)
class Change:
    rel: str
    expected: bytes | None  # what the file holds now (None: it does not exist)
    new: bytes | None  # what it will hold (None: it goes to the trash)


@dataclass
class _Staged:
    change: Change
    dir_fd: int
    leaf: str
    canon: str
    original: Original | None
    temp: str | None = None  # our new file before the swap; the replaced one after it
    temp_fd: int | None = None
    ours: int | None = None  # inode of our new file
    swapped: bool = False
    trashed_to: str | None = None


@dataclass
class SwapReport:
    """What became of each file: committed, or rolled back after `failed`."""

    done: list[str] = field(default_factory=list)
    trashed_to: dict[str, str] = field(default_factory=dict)


class SwapFailed(Conflict):
    """One file changed during the swap: the others were rolled back (see `left`)."""

    def __init__(self, message: str, failed: str, rolled_back: list[str], left: list[str]) -> None:
        super().__init__(message)
        self.failed = failed
        self.rolled_back = rolled_back
        self.left = left  # swapped files that could not be put back (kept as they are)


def _aside_name() -> str:
    return TEMP_PREFIX + secrets.token_hex(16)


def _ino(dir_fd: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino
    except FileNotFoundError:
        return None


def _changed(rel: str, what: str = "saved by another program") -> Conflict:
    return Conflict(f"'{display(rel)}' was {what} during the undo")


def _stage(ctx: FilesContext, change: Change) -> _Staged:
    rel = normalize_rel_path(change.rel)
    ctx.vault.check_not_protected(rel)
    dir_fd, leaf, canon = ctx.vault.open_parent(rel, create=change.new is not None)
    staged = _Staged(change, dir_fd, leaf, canon, None)
    try:
        staged.original = open_original(dir_fd, leaf, canon, guard=True)
        now = staged.original.data if staged.original is not None else None
        if now != change.expected:
            raise Conflict(f"'{display(canon)}' changed since the undo was planned")
        if change.new is not None:
            staged.temp, staged.temp_fd = write_temp(dir_fd, change.new, entry_mode(dir_fd, leaf))
            verify_fd(staged.temp_fd, canon, change.new)
            staged.ours = os.fstat(staged.temp_fd).st_ino
    except BaseException:
        _close(staged)
        raise
    return staged


def _swap(ctx: FilesContext, s: _Staged) -> None:
    """Swap one staged file in (see the module docstring, step 2).

    Raises:
        Conflict: the file is not what was staged against; nothing of ours stays under its name.
    """
    original, new = s.original, s.change.new
    if new is not None and original is not None:
        assert s.temp is not None and s.ours is not None
        try:
            exchange(s.dir_fd, s.temp, s.leaf)
        except RenameUnsupported:
            _replace_by_link(s, original)
            return
        except FileNotFoundError:
            raise _changed(s.canon, "deleted or moved by another program") from None
        if _ino(s.dir_fd, s.temp) == original.ino and original.unchanged():
            s.swapped = True
            return
        swap_back(s.dir_fd, s.temp, s.leaf, s.ours)  # leaves the newest save under the name
        s.temp = None
        raise _changed(s.canon)
    if new is not None:  # the file comes back
        assert s.temp is not None
        try:
            rename_noreplace(s.dir_fd, s.temp, s.dir_fd, s.leaf)
        except FileExistsError:
            raise _changed(s.canon, "created by another program") from None
        s.temp, s.swapped = None, True
        return
    assert original is not None  # a removal of a missing file is never planned
    aside = _aside_name()
    try:
        rename_noreplace(s.dir_fd, s.leaf, s.dir_fd, aside)
    except FileNotFoundError:
        raise _changed(s.canon, "deleted or moved by another program") from None
    if _ino(s.dir_fd, aside) == original.ino and original.unchanged():
        s.temp, s.swapped = aside, True
        return
    try:
        _put_back(s, aside)  # an editor's save we moved aside: it goes back under its name
    except FileExistsError:
        to_local_trash(ctx, s.dir_fd, aside, s.leaf)  # a third save took the name: keep both
    raise _changed(s.canon)


def _replace_by_link(s: _Staged, original: Original) -> None:
    """No RENAME_EXCHANGE here: keep the original by a hard link, re-check, rename over."""
    assert s.temp is not None
    keep = _aside_name()
    os.link(s.leaf, keep, src_dir_fd=s.dir_fd, dst_dir_fd=s.dir_fd, follow_symlinks=False)
    if _ino(s.dir_fd, keep) != original.ino or not original.unchanged():
        os.unlink(keep, dir_fd=s.dir_fd)
        raise _changed(s.canon)
    os.replace(s.temp, s.leaf, src_dir_fd=s.dir_fd, dst_dir_fd=s.dir_fd)
    s.temp, s.swapped = keep, True


def _put_back(s: _Staged, aside: str) -> None:
    """Return a file we moved aside to its name; if a new file took the name meanwhile,
    that newer file stays and ours goes to the trash (never deleted)."""
    try:
        rename_noreplace(s.dir_fd, aside, s.dir_fd, s.leaf)
    except FileExistsError:
        log.warning(
            "undo: a file was created under a name being rolled back; the older one went to the trash"
        )
        raise
    fsync_dir(s.dir_fd)


def _roll_back_one(ctx: FilesContext, s: _Staged) -> None:
    """Undo the swap of one file (newest save wins, see the module docstring)."""
    original, new = s.original, s.change.new
    if new is not None and original is not None:
        assert s.temp is not None and s.ours is not None
        try:
            swap_back(s.dir_fd, s.temp, s.leaf, s.ours)
        except RenameUnsupported:
            if _ino(s.dir_fd, s.leaf) == s.ours:
                os.replace(s.temp, s.leaf, src_dir_fd=s.dir_fd, dst_dir_fd=s.dir_fd)
            else:
                os.unlink(s.temp, dir_fd=s.dir_fd)  # a newer save is under the name: it stays
        s.temp = None
    elif new is not None:  # take our recreated file out again, unless a newer save replaced it
        aside = _aside_name()
        rename_noreplace(s.dir_fd, s.leaf, s.dir_fd, aside)
        if _ino(s.dir_fd, aside) == s.ours:
            os.unlink(aside, dir_fd=s.dir_fd)
        else:
            _put_back(s, aside)
    else:
        assert s.temp is not None
        try:
            _put_back(s, s.temp)
        except FileExistsError:
            to_local_trash(ctx, s.dir_fd, s.temp, s.leaf)
        s.temp = None
    fsync_dir(s.dir_fd)
    s.swapped = False


def _close(s: _Staged) -> None:
    """Release descriptors and leases; remove a temp file that never went in."""
    if s.temp is not None and not s.swapped:
        with contextlib.suppress(OSError):
            os.unlink(s.temp, dir_fd=s.dir_fd)
        s.temp = None
    if s.temp_fd is not None:
        os.close(s.temp_fd)
        s.temp_fd = None
    if s.original is not None:
        s.original.close()
    if s.dir_fd >= 0:
        os.close(s.dir_fd)
        s.dir_fd = -1


def swap_all(
    ctx: FilesContext, changes: list[Change], *, before_swap: Callable[[], None] | None = None
) -> SwapReport:
    """Apply every change or none (see the module docstring). `before_swap` runs once,
    after staging and before the first swap (tests use it to stage a race).

    Raises:
        Conflict: a file did not hold its expected bytes when staged (nothing changed).
        SwapFailed: a file changed during the swap; the files already swapped were rolled back.
        InvalidPath / Forbidden / NotFound: a path that cannot be written.
    """
    staged: list[_Staged] = []
    report = SwapReport()
    try:
        for change in changes:
            staged.append(_stage(ctx, change))
        if before_swap is not None:
            before_swap()
        for i, s in enumerate(staged):
            try:
                _swap(ctx, s)
            except Conflict as exc:
                rolled, left = _roll_back(ctx, staged[:i])
                raise SwapFailed(str(exc.message), s.canon, rolled, left) from None
        for s in staged:
            _commit(ctx, s, report)
    finally:
        for s in staged:
            _close(s)
    return report


def _roll_back(ctx: FilesContext, swapped: list[_Staged]) -> tuple[list[str], list[str]]:
    rolled: list[str] = []
    left: list[str] = []
    for s in reversed(swapped):
        try:
            _roll_back_one(ctx, s)
            rolled.append(s.canon)
        except (OSError, Conflict) as exc:
            log.warning("undo roll back failed for one file (%s)", type(exc).__name__)
            left.append(s.canon)
    return rolled, left


def _commit(ctx: FilesContext, s: _Staged, report: SwapReport) -> None:
    """Make one swapped file final: drop the replaced original, trash a removed file."""
    if s.change.new is None:
        assert s.temp is not None
        report.trashed_to[s.canon] = to_local_trash(ctx, s.dir_fd, s.temp, s.leaf)
    elif s.temp is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(s.temp, dir_fd=s.dir_fd)  # the replaced original: exactly the staged bytes
    s.temp = None
    fsync_dir(s.dir_fd)
    report.done.append(s.canon)
