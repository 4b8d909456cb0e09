"""vault_delete: soft delete that honours Obsidian's trash setting; permanent only when asked.

`.obsidian/app.json` `trashOption`:
- `local` (also when the file or the key is absent or unreadable) → the vault's `.trash/`,
  flat like Obsidian; a name already in the trash gets ` 1`, ` 2`, … (never overwritten,
  the rename itself is RENAME_NOREPLACE);
- `system` → the OS trash (send2trash);
- `none` → refused unless `permanent: true`.
`permanent: true` removes the file or folder for good (descriptor-relative, never following
links). A folder holding a protected folder is refused; daily notes and `.system/` too.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
from typing import Literal

from send2trash import send2trash

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import Conflict, Forbidden, InvalidParameter, InvalidPath, NotFound
from vault_agent.files import events, policy
from vault_agent.files.atomic import fsync_dir, read_current, rename_noreplace, sha256_hex
from vault_agent.files.events import Change
from vault_agent.files.models import PLAIN_WRITE, DeleteResult, FilesContext, WriteOptions
from vault_agent.files.move import folder_files
from vault_agent.files.pipeline import check_sha, observe_write
from vault_agent.names import write_not_found
from vault_agent.paths import DIR_FLAGS, FILE_READ_FLAGS, Resolved, display, normalize_rel_path

log = logging.getLogger("vault_agent.files")

TRASH_DIR = ".trash"
TrashOption = Literal["local", "system", "none"]
_MAX_APP_JSON = 1024 * 1024


def trash_option(ctx: FilesContext) -> TrashOption:
    """Obsidian's `trashOption` from `.obsidian/app.json` (links not followed); default local."""
    root = ctx.vault.io.open_root()
    try:
        try:
            ofd = os.open(".obsidian", DIR_FLAGS, dir_fd=root)
        except OSError:
            return "local"
        try:
            ffd = os.open("app.json", FILE_READ_FLAGS, dir_fd=ofd)
        except OSError:
            return "local"
        finally:
            os.close(ofd)
        with os.fdopen(ffd, "rb") as fh:
            raw = fh.read(_MAX_APP_JSON)
    finally:
        os.close(root)
    try:
        value = json.loads(raw).get("trashOption")
    except (ValueError, AttributeError):
        return "local"
    return value if value in ("local", "system", "none") else "local"


def _trash_names(name: str, is_dir: bool) -> list[str]:
    stem, ext = (name, "") if is_dir or "." not in name[1:] else name.rsplit(".", 1)
    ext = f".{ext}" if ext else ""
    return [name] + [f"{stem} {i}{ext}" for i in range(1, 10_000)]


def _trash_fd(ctx: FilesContext, create: bool) -> int | None:
    root = ctx.vault.io.open_root()
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(TRASH_DIR, 0o755, dir_fd=root)
        try:
            return os.open(TRASH_DIR, DIR_FLAGS, dir_fd=root)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise InvalidPath(
                    "the vault's .trash is not a folder (a link or a file); fix it first"
                ) from None
            raise
    finally:
        os.close(root)


def _free_trash_name(trash_fd: int | None, name: str, is_dir: bool) -> str:
    for candidate in _trash_names(name, is_dir):
        if trash_fd is None:
            return candidate
        try:
            os.stat(candidate, dir_fd=trash_fd, follow_symlinks=False)
        except FileNotFoundError:
            return candidate
    raise Conflict("the trash holds too many entries with this name; empty .trash/ first")


def _to_local_trash(parent_fd: int, leaf: str, name: str, is_dir: bool, ctx: FilesContext) -> str:
    tfd = _trash_fd(ctx, create=True)
    assert tfd is not None
    try:
        for candidate in _trash_names(name, is_dir):
            try:
                rename_noreplace(parent_fd, leaf, tfd, candidate)
            except FileExistsError:
                continue
            fsync_dir(tfd)
            fsync_dir(parent_fd)
            return f"{TRASH_DIR}/{candidate}"
    finally:
        os.close(tfd)
    raise Conflict("the trash holds too many entries with this name; empty .trash/ first")


def to_local_trash(ctx: FilesContext, parent_fd: int, entry: str, name: str) -> str:
    """Move file `entry` of `parent_fd` into the vault's `.trash/` as `name` (numbered when
    taken, never overwriting); returns where it went (vault-relative)."""
    return _to_local_trash(parent_fd, entry, name, False, ctx)


def _remove(parent_fd: int, leaf: str, is_dir: bool) -> None:
    if is_dir:
        shutil.rmtree(leaf, dir_fd=parent_fd)
    else:
        os.unlink(leaf, dir_fd=parent_fd)
    fsync_dir(parent_fd)


def _check_same_parent(ctx: FilesContext, resolved: Resolved, parent_fd: int) -> None:
    """The OS trash API takes a path: re-check that it still names the folder we opened.

    Raises:
        InvalidPath: a parent was swapped (e.g. for a symlink) since it was checked.
    """
    parent = ctx.vault.root.joinpath(*resolved.raw_parts[:-1])
    try:
        by_path = os.stat(parent, follow_symlinks=False)
    except OSError:
        by_path = None
    by_fd = os.fstat(parent_fd)
    if by_path is None or (by_path.st_dev, by_path.st_ino) != (by_fd.st_dev, by_fd.st_ino):
        raise InvalidPath(f"the folder of '{display(resolved.rel)}' changed while deleting; retry")


def _measure(ctx: FilesContext, resolved: Resolved, parent_fd: int, leaf: str) -> tuple[list[str], int]:
    if resolved.is_dir:
        files, names = folder_files(ctx, resolved)
        policy.check_folder_contents(ctx.vault, resolved.rel, names)
        base = ctx.vault.abspath(resolved)
        size = 0
        for f in files:
            with contextlib.suppress(OSError):
                size += os.stat(os.path.join(base, f[len(resolved.rel) + 1 :]), follow_symlinks=False).st_size
        return files, size
    st = os.stat(leaf, dir_fd=parent_fd, follow_symlinks=False)
    return [resolved.rel], st.st_size


def delete_path(
    ctx: FilesContext,
    path: str,
    *,
    permanent: bool = False,
    options: WriteOptions = PLAIN_WRITE,
) -> Outcome[DeleteResult]:
    """Move a file or folder to the trash (or delete it for good with `permanent`).

    Raises:
        NotFound: nothing there. Conflict: expected_sha256 differs. Forbidden: protected,
        `.system/`, `daily/`, trashOption none without permanent. InvalidParameter:
        expected_sha256 on a folder. InvalidPath: links.
    """
    rel = normalize_rel_path(path)
    policy.check_write(ctx.vault, rel, "delete")
    dry_run, wait_for_index = options.dry_run, options.wait_for_index
    expected = check_sha(options.expected_sha256)
    method: Literal["local", "system", "permanent"]
    if permanent:
        method = "permanent"
    else:
        option = trash_option(ctx)
        if option == "none":
            raise Forbidden(
                "this vault's trash setting is 'none' (.obsidian/app.json); pass permanent: true "
                "to delete for good"
            )
        method = option
    with ctx.write_lock.hold():
        try:
            resolved = ctx.vault.resolve(rel, match="normalized")
        except NotFound:
            raise write_not_found(rel) from None
        kind: Literal["file", "folder"] = "folder" if resolved.is_dir else "file"
        if resolved.is_dir and expected is not None:
            raise InvalidParameter.naming("{expected_sha256} applies to files only, not to folders")
        parent_fd, leaf, canon = ctx.vault.open_parent(resolved.rel, create=False)
        try:
            files, size = _measure(ctx, resolved, parent_fd, leaf)
            if expected is not None:
                current = read_current(parent_fd, leaf, canon)
                if current is None or sha256_hex(current) != expected:
                    raise Conflict(
                        f"'{display(canon)}' changed since it was read (sha256 differs from "
                        "expected_sha256); read it again before deleting"
                    )
            # The conversation recorder (when installed) keeps the bytes so undo can restore them.
            recorded = None
            if not dry_run and not resolved.is_dir and ctx.write_observer is not None:
                recorded = read_current(parent_fd, leaf, canon)
            trashed_to: str | None = None
            if dry_run:
                if method == "local":
                    tfd = _trash_fd(ctx, create=False)
                    try:
                        trashed_to = f"{TRASH_DIR}/{_free_trash_name(tfd, leaf, resolved.is_dir)}"
                    finally:
                        if tfd is not None:
                            os.close(tfd)
            elif method == "local":
                trashed_to = _to_local_trash(parent_fd, leaf, leaf, resolved.is_dir, ctx)
            elif method == "system":
                _check_same_parent(ctx, resolved, parent_fd)
                try:
                    send2trash(str(ctx.vault.abspath(resolved)))
                except OSError as exc:
                    log.warning("system trash failed (%s)", type(exc).__name__)
                    raise Forbidden(
                        "the system trash is not available here; set trashOption to 'local' in "
                        ".obsidian/app.json or pass permanent: true"
                    ) from None
            else:
                _remove(parent_fd, leaf, resolved.is_dir)
        finally:
            os.close(parent_fd)
        seq: int | None = None
        warnings: list[WarningItem] = []
        if not dry_run:
            log.info(
                "write tool=vault_delete path=%s method=%s files=%d bytes=%d", canon, method, len(files), size
            )
            changes: list[Change] = [("delete", f, None) for f in files]
            seq, warnings = events.record(ctx, changes)
            if recorded is not None:
                observe_write(ctx, "vault_delete", canon, recorded, None, moved_to=trashed_to)
    info = None
    if not dry_run:
        info, warnings = events.finish(ctx, seq, warnings, wait_for_index)
    data = DeleteResult(
        deleted_path=canon,
        type=kind,
        method=method,
        trashed_to=trashed_to,
        files=len(files),
        bytes=size,
        deleted=not dry_run,
        dry_run=dry_run,
        **(info.model_dump() if info is not None else {}),
    )
    return Outcome(data=data, warnings=list(warnings))
