"""The state dir is private to its owner: folders 0700, conversation files 0600.

The state dir holds what no other local user should read: the snapshot (note text in
chunks), conversation records (messages, replies) and the bytes undo keeps of overwritten
notes. Folders are created 0700 whatever the umask, and `tighten_state_dir` (run when
`serve` or `mcp` starts) narrows a state dir made looser by an older version or by hand:
the state dir itself and the conversations tree (folders 0700, files 0600). Files
elsewhere in the state dir keep their modes; the 0700 folder around them is what keeps
others out. A state dir that is (or contains) the vault itself is never narrowed: that
would lock other users out of the notes, which is not ours to decide.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("vault_agent.state")

DIR_MODE = 0o700
FILE_MODE = 0o600
PRIVATE_TREES = ("conversations",)  # under the state dir: every folder and file narrowed


def make_private_dir(path: Path) -> None:
    """Create `path` (and missing parents) if needed; a folder created here is 0700.

    Raises:
        OSError: as `Path.mkdir(parents=True, exist_ok=True)` (the error names `path`).
    """
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise
        return
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            return  # another process made it meanwhile
    os.chmod(path, DIR_MODE)  # mkdir's mode is masked by the umask; chmod is not


def make_state_dirs(path: Path, index_dir: Path) -> None:
    """`mkdir -p path` inside the state dir, each folder created 0700, but only while the
    state dir's own parent folder exists: a state dir inside a vault folder that is gone
    (renamed away by a sync tool, deleted) must never bring an empty folder back at the
    vault's path (the writer would index that as "every note deleted").

    Raises:
        FileNotFoundError: the state dir's parent folder is gone.
        OSError: as `make_private_dir`.
    """
    index_dir = Path(index_dir)
    if not index_dir.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "the folder of the index state dir is gone")
    inside = [p for p in (path, *path.parents) if p == index_dir or index_dir in p.parents]
    for folder in reversed(inside or [path]):
        make_private_dir(folder)


def _narrow(path: Path, mode: int, st: os.stat_result) -> bool:
    if stat.S_IMODE(st.st_mode) & ~mode == 0:
        return False
    os.chmod(path, stat.S_IMODE(st.st_mode) & mode)  # the caller checked it is no link
    return True


def tighten_state_dir(index_dir: Path, vault: Path | None = None) -> int:
    """Narrow the state dir to 0700 and its private trees to 0700/0600; returns how many
    entries changed. Missing folders are fine; links are never followed."""
    changed = 0
    try:
        root_st = os.stat(index_dir, follow_symlinks=False)
    except FileNotFoundError:
        return 0
    if not stat.S_ISDIR(root_st.st_mode):
        return 0
    if vault is None or not _holds_vault(index_dir, vault):
        with contextlib.suppress(OSError):
            changed += _narrow(index_dir, DIR_MODE, root_st)
    for name in PRIVATE_TREES:
        changed += _tighten_tree(index_dir / name)
    if changed:
        log.info("state dir: narrowed the permissions of %d entries to owner-only", changed)
    return changed


def _holds_vault(index_dir: Path, vault: Path) -> bool:
    try:
        inner, outer = vault.resolve(), index_dir.resolve()
    except OSError:
        return True  # cannot tell: leave it alone
    return inner == outer or outer in inner.parents


def _tighten_tree(top: Path) -> int:
    changed = 0
    for folder, dirs, files in os.walk(top, followlinks=False):
        here = Path(folder)
        with contextlib.suppress(OSError):
            changed += _narrow(here, DIR_MODE, os.stat(here, follow_symlinks=False))
        for name in files:
            path = here / name
            with contextlib.suppress(OSError):
                st = os.stat(path, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    changed += _narrow(path, FILE_MODE, st)
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
    return changed
