"""vault_mkdir (seed 003 create_folder): idempotent, parents created, policies applied."""

from __future__ import annotations

import contextlib
import logging
import os
import stat

from vault_agent.contracts import Outcome
from vault_agent.errors import Conflict, NotFound
from vault_agent.files import policy
from vault_agent.files.atomic import fsync_dir
from vault_agent.files.models import FilesContext, MkdirResult
from vault_agent.paths import display, normalize_rel_path

log = logging.getLogger("vault_agent.files")


def make_folder(ctx: FilesContext, path: str, *, dry_run: bool = False) -> Outcome[MkdirResult]:
    """Create a folder and its parents; an existing folder is a success with created=false.

    Raises:
        Conflict: a file has that name. Forbidden: protected, `.system/`, under `daily/`.
        InvalidPath: a parent is a link or a file.
    """
    rel = normalize_rel_path(path)
    policy.check_write(ctx.vault, rel, "mkdir")
    with ctx.write_lock.hold():
        try:
            fd, leaf, canon = ctx.vault.open_parent(rel, create=not dry_run)
        except NotFound:
            if dry_run:
                return Outcome(data=MkdirResult(path=rel, created=True, dry_run=True))
            raise
        try:
            try:
                st = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None:
                if stat.S_ISDIR(st.st_mode):
                    return Outcome(data=MkdirResult(path=canon, created=False, dry_run=dry_run))
                raise Conflict(f"'{display(canon)}' exists and is not a folder")
            if dry_run:
                return Outcome(data=MkdirResult(path=canon, created=True, dry_run=True))
            created = True
            try:
                os.mkdir(leaf, 0o755, dir_fd=fd)
            except FileExistsError:
                created = False  # a concurrent mkdir won: still idempotent
            with contextlib.suppress(OSError):
                fsync_dir(fd)
        finally:
            os.close(fd)
    log.info("write tool=vault_mkdir path=%s created=%s", canon, created)
    return Outcome(data=MkdirResult(path=canon, created=created))
