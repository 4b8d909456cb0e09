"""vault_move: move or rename a file or folder, then rewrite the links that pointed to it.

Rules: source must exist (matched up to Unicode normalization, never case); the
destination must not exist (CONFLICT; the rename itself is RENAME_NOREPLACE so a race
cannot clobber it); its parents are created; same path is a no-op; a folder never moves
into itself; protected folders, `.system/` and `daily/` are refused on both ends, and so
is a folder that contains a protected folder. With `update_links` every note elsewhere
whose links resolve to a moved file is rewritten, each by its own atomic write.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from typing import Literal

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import Conflict, InvalidParameter, NotFound, VaultAgentError
from vault_agent.files import events, policy
from vault_agent.files.atomic import (
    fsync_dir,
    open_original,
    read_current,
    rename_noreplace,
    replace_atomic,
    sha256_hex,
)
from vault_agent.files.events import Change
from vault_agent.files.links import LinkIndex, RewriteContext, may_link, rewrite_links, stems_of
from vault_agent.files.models import PLAIN_WRITE, FilesContext, LinkUpdate, MoveResult, WriteOptions
from vault_agent.files.pipeline import check_sha
from vault_agent.names import write_not_found
from vault_agent.paths import Resolved, display, normalize_rel_path

log = logging.getLogger("vault_agent.files")

MAX_REPORTED_LINK_FILES = 200


def folder_files(ctx: FilesContext, resolved: Resolved) -> tuple[list[str], list[str]]:
    """(regular files, every entry name) under a folder, vault-relative, links not followed."""
    base = ctx.vault.abspath(resolved)
    files: list[str] = []
    names: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        sub = os.path.relpath(dirpath, base)
        prefix = resolved.rel if sub == "." else f"{resolved.rel}/{sub.replace(os.sep, '/')}"
        for d in dirnames:
            names.append(f"{prefix}/{d}")
        for f in filenames:
            names.append(f"{prefix}/{f}")
            try:
                st = os.stat(os.path.join(dirpath, f), follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                files.append(f"{prefix}/{f}")
    return sorted(files), names


def _plan_links(
    ctx: FilesContext, mapping: dict[str, str], all_files: list[str]
) -> list[tuple[str, str, int]]:
    """(old path, new path, links) of every note whose text changes after the move."""
    moved_old = set(mapping)
    after_files = [mapping.get(f, f) for f in all_files]
    rctx = RewriteContext(mapping=mapping, before=LinkIndex(all_files), after=LinkIndex(after_files))
    stems = stems_of(moved_old)
    plan: list[tuple[str, str, int]] = []
    for rel, data in _read_notes(ctx, [f for f in all_files if ctx.vault.is_note_name(f)]):
        text = data.decode("utf-8", errors="strict") if _is_utf8(data) else None
        if text is None or ("[[" not in text and "](" not in text):
            continue
        if rel not in moved_old and not may_link(text.casefold(), stems):
            continue
        new_text, count = rewrite_links(text, rel, mapping.get(rel, rel), rctx)
        if count and new_text != text:
            plan.append((rel, mapping.get(rel, rel), count))
    return plan


def _read_notes(ctx: FilesContext, rels: list[str]) -> Iterator[tuple[str, bytes]]:
    """(rel, bytes) of each note, read through one checked fd per folder (O_NOFOLLOW).

    Planning only: the rewrite itself re-reads each file through the write pipeline.
    Vanished or unreadable files are skipped.
    """
    by_folder: dict[str, list[str]] = {}
    for rel in rels:
        by_folder.setdefault(rel.rsplit("/", 1)[0] if "/" in rel else "", []).append(rel)
    for folder, members in by_folder.items():
        try:
            fd, _, _ = ctx.vault.open_parent(f"{folder}/x" if folder else "x", create=False)
        except VaultAgentError:
            continue
        try:
            for rel in members:
                try:
                    data = read_current(fd, rel.rsplit("/", 1)[-1], rel)
                except (VaultAgentError, OSError):
                    continue
                if data is not None:
                    yield rel, data
        finally:
            os.close(fd)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _all_files(ctx: FilesContext) -> list[str]:
    return [e.rel for e in ctx.vault.walk(notes_only=False)]


def _apply_rewrite(ctx: FilesContext, rel: str, rctx: RewriteContext, source_old: str) -> int:
    """Rewrite one note's links in place (atomic); returns the links changed (0: skipped)."""
    fd, leaf, canon = ctx.vault.open_parent(rel, create=False)
    try:
        original = open_original(fd, leaf, canon, guard=True)
        if original is None:
            return 0
        try:
            if not _is_utf8(original.data):
                return 0
            text = original.data.decode("utf-8")
            new_text, count = rewrite_links(text, source_old, rel, rctx)
            if not count or new_text == text:
                return 0
            # Compare-and-swap: an editor's save to this note since the read is never lost.
            replace_atomic(fd, leaf, canon, new_text.encode("utf-8"), original=original)
        finally:
            original.close()
    finally:
        os.close(fd)
    log.info("write tool=vault_move path=%s links=%d", canon, count)
    return count


def move_path(
    ctx: FilesContext,
    source: str,
    destination: str,
    *,
    update_links: bool = True,
    options: WriteOptions = PLAIN_WRITE,
) -> Outcome[MoveResult]:
    """Move/rename a file or folder and (by default) rewrite links to it.

    Raises:
        NotFound: no source. Conflict: destination exists, or the source file's sha256 is
        not expected_sha256. InvalidParameter: folder into itself, expected_sha256 on a
        folder. Forbidden: protected, `.system/`, `daily/` on either end. InvalidPath.
    """
    src_rel = normalize_rel_path(source)
    dst_rel = normalize_rel_path(destination)
    policy.check_write(ctx.vault, src_rel, "move_from")
    policy.check_write(ctx.vault, dst_rel, "move_to")
    dry_run, wait_for_index = options.dry_run, options.wait_for_index
    expected = check_sha(options.expected_sha256)
    with ctx.write_lock.hold():
        try:
            src = ctx.vault.resolve(src_rel, match="normalized")
        except NotFound:
            raise write_not_found(src_rel) from None
        kind: Literal["file", "folder"] = "folder" if src.is_dir else "file"
        if expected is not None:
            _check_source_unchanged(ctx, src, expected)
        if src.rel == dst_rel:
            data = MoveResult(
                source=src.rel, destination=dst_rel, type=kind, moved=False, files_moved=0, dry_run=dry_run
            )
            return Outcome(data=data)
        if src.is_dir and dst_rel.startswith(src.rel + "/"):
            raise InvalidParameter("a folder cannot be moved into itself; choose a destination outside it")
        if src.is_dir:
            moved_files, names = folder_files(ctx, src)
            policy.check_folder_contents(ctx.vault, src.rel, names)
            mapping = {f: dst_rel + f[len(src.rel) :] for f in moved_files}
        else:
            mapping = {src.rel: dst_rel}
        _check_destination_free(ctx, dst_rel)
        all_files = _all_files(ctx) if update_links else []
        plan = _plan_links(ctx, mapping, all_files) if update_links else []
        if not dry_run:
            _rename(ctx, src, dst_rel)
            changes: list[Change] = [("move", old, new) for old, new in sorted(mapping.items())]
            plan = _rewrite_after_move(ctx, mapping, all_files, plan)
            changes += [("upsert", new, None) for _old, new, _n in plan]
            log.info("write tool=vault_move path=%s dest=%s files=%d", src.rel, dst_rel, len(mapping))
            seq, warnings = events.record(ctx, changes)
        else:
            seq, warnings = None, []
    info, warnings = events.finish(ctx, seq, warnings, wait_for_index) if not dry_run else (None, [])
    updates = [LinkUpdate(path=new, links=n) for _old, new, n in plan]
    out_warnings: list[WarningItem] = list(warnings)
    if len(updates) > MAX_REPORTED_LINK_FILES:
        out_warnings.append(
            WarningItem(
                code="TRUNCATED",
                message=f"{len(updates)} files had links rewritten; only the first "
                f"{MAX_REPORTED_LINK_FILES} are listed",
            )
        )
    data = MoveResult(
        source=src.rel,
        destination=dst_rel,
        type=kind,
        moved=not dry_run,
        files_moved=len(mapping),
        links_updated=updates[:MAX_REPORTED_LINK_FILES],
        links_total=sum(u.links for u in updates),
        dry_run=dry_run,
        **(info.model_dump() if info is not None else {}),
    )
    return Outcome(data=data, warnings=out_warnings)


def _check_source_unchanged(ctx: FilesContext, src: Resolved, expected: str) -> None:
    """The expected_sha256 precondition of every write (SPEC), on the file being moved."""
    if src.is_dir:
        raise InvalidParameter.naming("{expected_sha256} applies to files only, not to folders")
    fd, leaf, canon = ctx.vault.open_parent(src.rel, create=False)
    try:
        current = read_current(fd, leaf, canon)
    finally:
        os.close(fd)
    if current is None or sha256_hex(current) != expected:
        raise Conflict(
            f"'{display(canon)}' changed since it was read (sha256 differs from expected_sha256); "
            "read it again before moving it"
        )


def _check_destination_free(ctx: FilesContext, dst_rel: str) -> None:
    try:
        fd, leaf, canon = ctx.vault.open_parent(dst_rel, create=False)
    except NotFound:
        return  # parents will be created
    try:
        os.stat(leaf, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    finally:
        os.close(fd)
    raise Conflict(
        f"'{display(canon)}' already exists; vault_move never overwrites, pick another destination"
    )


def _rename(ctx: FilesContext, src: Resolved, dst_rel: str) -> None:
    sfd, sleaf, _ = ctx.vault.open_parent(src.rel, create=False)
    try:
        dfd, dleaf, dcanon = ctx.vault.open_parent(dst_rel, create=True)
        try:
            try:
                rename_noreplace(sfd, sleaf, dfd, dleaf)
            except FileExistsError:
                raise Conflict(
                    f"'{display(dcanon)}' already exists; vault_move never overwrites, pick another destination"
                ) from None
            fsync_dir(dfd)
            fsync_dir(sfd)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)


def _rewrite_after_move(
    ctx: FilesContext, mapping: dict[str, str], all_files: list[str], plan: list[tuple[str, str, int]]
) -> list[tuple[str, str, int]]:
    after_files = [mapping.get(f, f) for f in all_files]
    rctx = RewriteContext(mapping=mapping, before=LinkIndex(all_files), after=LinkIndex(after_files))
    done: list[tuple[str, str, int]] = []
    for old, new, _planned in plan:
        try:
            count = _apply_rewrite(ctx, new, rctx, old)
        except Exception as exc:  # one unreadable note must not undo a completed move
            log.warning("link rewrite skipped for %s (%s)", new, type(exc).__name__)
            continue
        if count:
            done.append((old, new, count))
    return done
