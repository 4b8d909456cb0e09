"""The one read-modify-write pipeline every file-content tool goes through.

policy (caller) → lock → open parent (descriptor-relative, O_NOFOLLOW; parents made only
for real writes) → read current bytes → existence + `expected_sha256` preconditions →
transform → dry run stops here → atomic replace with a last re-check before the rename →
read-back verification → event appended → lock released → optional wait for the index.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from vault_agent.contracts import WarningItem
from vault_agent.errors import Conflict, InvalidParameter, NotFound, TooLarge
from vault_agent.files import events
from vault_agent.files.atomic import open_original, read_current, replace_atomic, sha256_hex
from vault_agent.files.models import FilesContext, IndexInfo, WriteOptions
from vault_agent.files.swap import ChangedAfterWrite, Original
from vault_agent.names import write_not_found
from vault_agent.paths import display

log = logging.getLogger("vault_agent.files")

MAX_CONTENT_BYTES = 8 * 1024 * 1024  # one call's `content` (HTTP bodies are capped lower)
_SHA_RE = re.compile(r"^[0-9a-fA-F]{64}$")

Existence = Literal["must_exist", "must_not_exist", "any"]
Transform = Callable[[bytes | None], bytes]


@dataclass(frozen=True)
class Change:
    """One file change as the pipeline runs it: the tool making it (the log line, the
    conversation record), the normalised path, what must hold before (`exist`; `missing`
    builds the error for a file that must exist and does not; `create_parents` makes the
    folders of a real write) and the caller's write options."""

    tool: str
    rel: str
    exist: Existence
    options: WriteOptions = field(default_factory=WriteOptions)
    missing: Callable[[str], Exception] | None = None
    create_parents: bool = False


@dataclass
class Applied:
    """Outcome of one file change (or its dry-run plan)."""

    rel: str
    before: bytes | None
    after: bytes
    created: bool
    changed: bool
    info: IndexInfo = field(default_factory=IndexInfo)
    warnings: list[WarningItem] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        return sha256_hex(self.after)


def check_sha(expected: str | None) -> str | None:
    """Validate an `expected_sha256` parameter (64 hex digits), lower-cased.

    Raises:
        InvalidParameter: not 64 hex digits.
    """
    if expected is None:
        return None
    if not isinstance(expected, str) or not _SHA_RE.match(expected):
        raise InvalidParameter.about(
            "expected_sha256", "must be 64 hexadecimal characters (the sha256 of the file)"
        )
    return expected.lower()


def encode_content(content: str, what: str = "content") -> bytes:
    """UTF-8 bytes of text a write puts into a file (`what` names the parameter).

    NUL is refused: notes are text, a NUL makes editors and tools treat the file as binary
    (git, grep), and it is never what an agent meant to write.

    Raises:
        TooLarge: over MAX_CONTENT_BYTES. InvalidParameter: lone surrogates, or NUL.
    """
    if "\x00" in content:
        raise InvalidParameter.about(what, "contains a NUL character (U+0000); notes are text, remove it")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidParameter.about(what, "is not valid Unicode text") from None
    if len(data) > MAX_CONTENT_BYTES:
        raise TooLarge.about(
            what, f"is larger than {MAX_CONTENT_BYTES:,} bytes; split it into several appends"
        )
    return data


def decode_text(data: bytes, rel: str) -> str:
    """The text of an existing file for text edits.

    Raises:
        InvalidParameter: the file is not UTF-8 (editing it as text would corrupt it).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParameter(
            f"'{display(rel)}' is not UTF-8 text; vault-agent edits text files only"
        ) from None


def _precondition(rel: str, current: bytes | None, exist: Existence, expected: str | None) -> None:
    if exist == "must_not_exist" and current is not None:
        raise Conflict(f"'{display(rel)}' already exists; use vault_write or vault_edit to change it")
    if expected is not None:
        if current is None:
            raise Conflict(f"'{display(rel)}' does not exist, so it cannot match expected_sha256")
        if sha256_hex(current) != expected:
            raise Conflict(
                f"'{display(rel)}' changed since it was read (sha256 differs from expected_sha256); "
                "read it again and retry"
            )


def _open_parent(ctx: FilesContext, rel: str, create: bool, dry_run: bool) -> tuple[int | None, str, str]:
    try:
        return ctx.vault.open_parent(rel, create=create and not dry_run)
    except NotFound:
        if create and dry_run:
            return None, rel.rsplit("/", 1)[-1], rel  # the parents would be created
        raise


def apply_change(ctx: FilesContext, change: Change, transform: Transform) -> Applied:
    """Run one content change end to end (see the module docstring).

    Raises:
        Conflict: existence or hash precondition failed, or the file changed meanwhile.
        NotFound / InvalidPath / TooLarge / InvalidParameter: from resolution or `transform`.
    """
    tool, rel, exist, missing = change.tool, change.rel, change.exist, change.missing
    dry_run, wait_for_index = change.options.dry_run, change.options.wait_for_index
    expected = check_sha(change.options.expected_sha256)
    lock = ctx.write_lock
    with lock.hold() if not dry_run else contextlib.nullcontext():
        try:
            dir_fd, leaf, canon = _open_parent(ctx, rel, change.create_parents, dry_run)
        except NotFound:
            if exist == "must_exist":
                raise (missing or _not_found)(rel) from None
            raise
        original: Original | None = None
        try:
            # Kept open until the swap: it is what the new bytes must replace exactly.
            original = open_original(dir_fd, leaf, canon, guard=not dry_run) if dir_fd is not None else None
            current = original.data if original is not None else None
            if current is None and exist == "must_exist":
                raise (missing or _not_found)(canon)
            _precondition(canon, current, exist, expected)
            after = transform(current)
            applied = Applied(canon, current, after, created=current is None, changed=after != current)
            if dry_run or not applied.changed:
                return applied
            assert dir_fd is not None  # only dry runs go without a parent fd

            def recheck() -> None:
                now = read_current(dir_fd, leaf, canon)
                if now != current:
                    raise Conflict(
                        f"'{display(canon)}' changed while vault-agent was writing it; nothing was "
                        "replaced. Read it again and retry"
                    )

            try:
                replace_atomic(
                    dir_fd,
                    leaf,
                    canon,
                    after,
                    must_not_exist=current is None,
                    precheck=recheck,
                    original=original,
                )
            except ChangedAfterWrite:
                if original is not None:
                    original.close()
                events.record(ctx, [("upsert", canon, None)])  # the file did change: index it
                raise
            finally:
                if original is not None:
                    original.close()  # ends the lease at once: an editor's open waits on it
            log.info(
                "write tool=%s path=%s bytes_before=%s bytes_after=%d",
                tool,
                canon,
                "-" if current is None else len(current),
                len(after),
            )
            seq, warnings = events.record(ctx, [("upsert", canon, None)])
            observe_write(ctx, tool, canon, current, after)
        finally:
            if original is not None:
                original.close()
            if dir_fd is not None:
                os.close(dir_fd)
    applied.info, applied.warnings = events.finish(ctx, seq, warnings, wait_for_index)
    return applied


def observe_write(
    ctx: FilesContext,
    tool: str,
    rel: str,
    before: bytes | None,
    after: bytes | None,
    moved_to: str | None = None,
) -> None:
    """Tell the conversation recorder, when one is installed, what a write replaced (for undo)."""
    observer = ctx.write_observer
    if observer is None:
        return
    try:
        observer(tool, rel, before, after, moved_to)
    except Exception as exc:  # the file is already durable: a failed record must not fail the write
        log.warning("write not recorded in the conversation (%s)", type(exc).__name__)


def _not_found(rel: str) -> Exception:
    return write_not_found(rel)
