"""Seed 002's content tools: vault_create, vault_write (overwrite | append), vault_replace.

Plus `put_file` (seed 003 write_file: create or overwrite, parents made), which applies
the same policies per case: creating follows vault_create, overwriting vault_write.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from vault_agent.contracts import Outcome
from vault_agent.errors import (
    Conflict,
    InvalidParameter,
    InvalidPath,
    NotFound,
    empty_parameter,
    out_of_range,
)
from vault_agent.files.atomic import read_current
from vault_agent.files.models import PLAIN_WRITE, FilesContext, ReplaceResult, WriteOptions, WriteResult
from vault_agent.files.pipeline import Applied, Change, Existence
from vault_agent.files.policy import Action
from vault_agent.files.write_path import change_diff, edit_text, write_content
from vault_agent.names import WRITES_TAKE_PATHS
from vault_agent.paths import display, normalize_rel_path


def _write_result(applied: Applied, written: int, dry_run: bool) -> Outcome[WriteResult]:
    diff, truncated = change_diff(applied, dry_run)
    data = WriteResult(
        written_path=applied.rel,
        written_bytes=written,
        size_bytes=len(applied.after),
        sha256=applied.sha256,
        created=applied.created,
        changed=applied.changed,
        dry_run=dry_run,
        diff=diff,
        diff_truncated=truncated,
        **applied.info.model_dump(),
    )
    return Outcome(data=data, warnings=applied.warnings)


def _whole(_current: bytes | None, data: bytes) -> bytes:
    return data


def _missing_for_write(rel: str) -> Exception:
    return Conflict(
        f"'{display(rel)}' does not exist; vault_write changes existing files only ({WRITES_TAKE_PATHS}), "
        "use vault_create"
    )


def create_file(
    ctx: FilesContext, path: str, content: str, options: WriteOptions = PLAIN_WRITE
) -> Outcome[WriteResult]:
    """vault_create: a new file (parents made); the file must not exist.

    Raises:
        Conflict: the file exists. Forbidden: `.system/`, protected, daily name rules.
        InvalidPath: bad path, symlinked parent. TooLarge: content over the cap.
    """
    change = Change("vault_create", normalize_rel_path(path), "must_not_exist", options, create_parents=True)
    applied, written = write_content(ctx, change, "create", content, _whole)
    return _write_result(applied, written, options.dry_run)


def write_file(
    ctx: FilesContext, path: str, content: str, mode: str, options: WriteOptions = PLAIN_WRITE
) -> Outcome[WriteResult]:
    """vault_write: overwrite or append to an existing file (unknown modes refused first).

    Raises:
        InvalidParameter: mode not overwrite|append. Conflict: file missing or changed.
        Forbidden: `.system/`, protected, daily overwrite. NotFound / InvalidPath.
    """
    if mode not in ("overwrite", "append"):  # before any I/O: an unknown mode never overwrites
        raise InvalidParameter.about("mode", "must be one of: overwrite, append")
    action: Action = "append" if mode == "append" else "overwrite"
    combine = _append if mode == "append" else _whole
    change = Change(
        "vault_write", normalize_rel_path(path), "must_exist", options, missing=_missing_for_write
    )
    applied, written = write_content(ctx, change, action, content, combine)
    return _write_result(applied, written, options.dry_run)


def _append(current: bytes | None, data: bytes) -> bytes:
    assert current is not None  # exist="must_exist"
    return current + data


def put_file(
    ctx: FilesContext, path: str, content: str, options: WriteOptions = PLAIN_WRITE
) -> Outcome[WriteResult]:
    """write_file (seed 003): create (parents made) or overwrite, with the matching policy.

    Raises:
        Forbidden / Conflict / InvalidPath / TooLarge: as vault_create or vault_write.
    """
    rel = normalize_rel_path(path)
    exists = _exists(ctx, rel)
    exist: Existence = "must_exist" if exists else "must_not_exist"
    change = Change("write_file", rel, exist, options, missing=_missing_for_write, create_parents=True)
    applied, written = write_content(ctx, change, "overwrite" if exists else "create", content, _whole)
    return _write_result(applied, written, options.dry_run)


def _exists(ctx: FilesContext, rel: str) -> bool:
    try:
        fd, leaf, canon = ctx.vault.open_parent(rel, create=False)
    except (NotFound, InvalidPath):
        return False  # a missing parent means a new file; a bad parent fails again in the pipeline
    try:
        return read_current(fd, leaf, canon) is not None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class ReplaceRequest:
    """vault_replace's parameters: the file, the exact text and its replacement, the cap."""

    path: str
    find: str
    replace: str
    max_replacements: int | None = None
    options: WriteOptions = field(default_factory=WriteOptions)


def replace_text(ctx: FilesContext, request: ReplaceRequest) -> Outcome[ReplaceResult]:
    """vault_replace: replace every occurrence of `find` when there are at most
    `max_replacements` (default 1) of them.

    SPEC: more occurrences than the cap is a `CONFLICT` and nothing changes (replacing the
    first ones would let an agent edit the wrong occurrence); the message gives the count.

    Raises:
        InvalidParameter: empty find, max_replacements < 1. Conflict: find absent, more
        occurrences than max_replacements, or the file changed. Forbidden: `.system/`,
        `daily/`, protected. NotFound: no such file.
    """
    find, replace, options = request.find, request.replace, request.options
    if not find:
        raise empty_parameter("find")
    limit = 1 if request.max_replacements is None else request.max_replacements
    if limit < 1:
        raise out_of_range("max_replacements", 1, None)

    def replace_all(text: str, rel: str) -> tuple[str, int]:
        count = text.count(find)
        if count == 0:
            raise Conflict(f"find text does not occur in '{display(rel)}'; nothing was replaced")
        if count > limit:
            raise Conflict(
                f"find text occurs {count} times in '{display(rel)}' but max_replacements is {limit}; "
                f"nothing was replaced: make find longer so it is unique, or set max_replacements to {count}"
            )
        return text.replace(find, replace), count

    applied, count = edit_text(
        ctx,
        "vault_replace",
        normalize_rel_path(request.path),
        "replace",
        replace_all,
        options,
        texts=[(replace, "replace")],
    )
    diff, truncated = change_diff(applied, options.dry_run)
    data = ReplaceResult(
        written_path=applied.rel,
        replacements=count,
        size_bytes=len(applied.after),
        sha256=applied.sha256,
        dry_run=options.dry_run,
        diff=diff,
        diff_truncated=truncated,
        **applied.info.model_dump(),
    )
    return Outcome(data=data, warnings=list(applied.warnings))
