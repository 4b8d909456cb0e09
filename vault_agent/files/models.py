"""Result models of the write tools (the `data` of the envelope) and the context they need.

Field names are snake_case on every surface: seed 002's schemas (`written_path`,
`written_bytes`, `replacements`) are normative, and the other tools follow them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel

from vault_agent.config import Settings
from vault_agent.paths import Vault

if TYPE_CHECKING:  # the files layer reaches the indexer only through its event-log entry point
    from vault_agent.files.lock import WriteLock
    from vault_agent.indexer.tool_events import Writer


class WriteObserver(Protocol):
    """Told of each write once it is durable: the file's bytes before and after (None: absent)
    and, for a move, where it went. The conversation recorder installs one (for undo)."""

    def __call__(
        self, tool: str, rel: str, before: bytes | None, after: bytes | None, moved_to: str | None = None
    ) -> None: ...


class FilesContext(Protocol):
    """What a write tool needs from `api.operation.AppContext` (structural, no import)."""

    settings: Settings
    vault: Vault
    writer: Writer | None
    write_lock: WriteLock
    write_observer: WriteObserver | None


@dataclass(frozen=True)
class WriteOptions:
    """The options every write tool takes alike, carried as one value from the transport's
    params down to the pipeline (`pipeline.Change`)."""

    dry_run: bool = False
    expected_sha256: str | None = None
    wait_for_index: bool = False


PLAIN_WRITE = WriteOptions()  # the defaults: a real write, no sha256 precondition, not waiting


class IndexInfo(BaseModel):
    """Where the write stands in the index: its event and the snapshot that contains it."""

    event_seq: int | None = None  # seq of the last event this call appended (null: not recorded)
    snapshot_id: int | None = None  # snapshot that contains the write (null until known)
    indexed: bool = False  # true once that snapshot committed (wait_for_index)


class WriteResult(IndexInfo):
    """vault_create / vault_write (seed 002: written_path, written_bytes)."""

    written_path: str
    written_bytes: int  # bytes of `content` this call wrote (appended bytes for append)
    size_bytes: int  # size of the file afterwards
    sha256: str  # of the file afterwards: pass it as expected_sha256 to the next write
    created: bool
    changed: bool  # false when the file already held exactly these bytes
    dry_run: bool = False
    diff: str | None = None  # unified diff, only with dry_run
    diff_truncated: bool = False


class ReplaceResult(IndexInfo):
    """vault_replace (seed 002: written_path, replacements)."""

    written_path: str
    replacements: int
    size_bytes: int
    sha256: str
    dry_run: bool = False
    diff: str | None = None
    diff_truncated: bool = False


class EditResult(IndexInfo):
    """vault_edit: what changed, as a bounded unified diff."""

    path: str
    operation: Literal["replace", "insert", "delete_lines"]
    replacements: int  # occurrences replaced / lines inserted / lines deleted
    diff: str
    diff_truncated: bool
    size_bytes: int
    sha256: str
    dry_run: bool = False


class LinkUpdate(BaseModel):
    path: str  # the file whose links were (or would be) rewritten, at its final location
    links: int


class MoveResult(IndexInfo):
    source: str
    destination: str
    type: Literal["file", "folder"]
    moved: bool  # false for the same-path no-op and for dry_run
    files_moved: int
    links_updated: list[LinkUpdate] = []
    links_total: int = 0
    dry_run: bool = False


class DeleteResult(IndexInfo):
    deleted_path: str
    type: Literal["file", "folder"]
    method: Literal["local", "system", "permanent"]
    trashed_to: str | None  # vault-relative path inside .trash/ (local), else null
    files: int
    bytes: int
    deleted: bool  # false for dry_run
    dry_run: bool = False


class MkdirResult(IndexInfo):
    path: str
    created: bool  # false when the folder already existed
    dry_run: bool = False


class StatResult(BaseModel):
    """vault_stat (seed 003 get_file_info)."""

    path: str
    type: Literal["file", "folder"]
    size_bytes: int | None  # null for folders
    entries: int | None  # direct children of a folder, null for files
    created: str | None  # ISO 8601 UTC birth time; null when the file system does not record it
    modified: str  # ISO 8601 UTC
    sha256: str | None = None  # of a file's bytes (files up to 16 MiB), for expected_sha256


RENAME_TAG_LIMIT_DEFAULT, RENAME_TAG_LIMIT_MAX = 10, 50  # notes listed (with diffs) per answer


class TagNoteChange(BaseModel):
    """vault_rename_tag: one note whose tags change (or changed)."""

    path: str
    occurrences: int  # tag names renamed in this note
    frontmatter: int  # of which in the frontmatter `tags`/`tag` values
    inline: int  # of which `#tags` in the body
    sha256_before: str  # the bytes the rename is for: a note that no longer has them is skipped
    sha256: str  # after the rename
    diff: str
    diff_truncated: bool


SkipReason = Literal["changed", "missing", "forbidden", "not_utf8", "too_large", "too_nested"]


class TagNoteSkipped(BaseModel):
    path: str
    reason: SkipReason


class RenameTagResult(IndexInfo):
    """vault_rename_tag (dry run by default)."""

    old_tag: str
    new_tag: str
    dry_run: bool
    notes_total: int  # notes that change (dry run) or changed (applied)
    occurrences_total: int
    notes: list[TagNoteChange]  # one page, path order, each diff bounded
    next_cursor: str | None  # dry run: the next page; null on the last page and when applied
    truncated: bool  # more notes changed than `notes` lists
    merged: bool  # a renamed tag already existed: the two now merge into one
    merged_tags: list[str]  # which ones (at most 20)
    skipped_total: int
    skipped: list[TagNoteSkipped]  # at most 50, path order
    index_freshness: str  # of the snapshot the candidate notes came from


class TaskLineText(BaseModel):
    """A task line of the note after the change: its number and its text."""

    line: int
    text: str


class UpdateTaskResult(IndexInfo):
    """vault_update_task: the task line after the change, and the next occurrence it added."""

    path: str
    line: int | None  # the changed task's line now; null when its `🏁 delete` removed it
    text: str | None  # that line's text: with `sha256`, the preconditions of a next change
    status: str  # the status symbol afterwards
    status_type: str
    next_occurrence: TaskLineText | None  # the new occurrence of a completed recurring task
    removed: bool  # `🏁 delete`: the completed task's line was removed
    changed: bool  # false when the line already read this way (nothing written)
    dry_run: bool
    sha256_before: str  # of the note as read: expected_sha256 of the call that applies a dry run
    sha256: str  # of the note afterwards
    diff: str
    diff_truncated: bool
