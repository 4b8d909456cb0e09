"""Write tools and file info on every surface: create, write, replace, edit, mv, rm, mkdir, info.

Thin adapters: each Params model maps 1:1 onto a core function in `vault_agent.files`.
Write tools are kind="write": refused (FORBIDDEN) and unlisted unless writes are enabled.
The agent-files profile (`agent_files.py`) takes the edit, move and delete parameters of
this module and calls its adapters (`call_edit`, `call_move`, `call_delete`) underneath.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from vault_agent.api.human.files import line_range as _line_range
from vault_agent.api.human.files import render_info as _render_info
from vault_agent.api.human.files import render_write as _render_write
from vault_agent.api.operation import AppContext, CliOption, LineRange, NoteName, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.files.content import ReplaceRequest, create_file, replace_text, write_file
from vault_agent.files.delete import delete_path
from vault_agent.files.edit import EditRequest, edit_file
from vault_agent.files.mkdir import make_folder
from vault_agent.files.models import (
    DeleteResult,
    EditResult,
    MkdirResult,
    MoveResult,
    ReplaceResult,
    StatResult,
    WriteOptions,
    WriteResult,
)
from vault_agent.files.move import move_path
from vault_agent.files.races import race_safe
from vault_agent.files.stat import stat_path
from vault_agent.query.note_names import snapshot_names

_SHA = "sha256 of what you read; CONFLICT if the file changed since"
_WAIT = "return once the index holds this write (up to 10 s)"


class _WriteCommon(Params):
    dry_run: bool = False
    wait_for_index: bool = False

    def options(self) -> WriteOptions:
        """The write options the core takes as one value (expected_sha256: where the tool has it)."""
        expected: str | None = getattr(self, "expected_sha256", None)
        return WriteOptions(self.dry_run, expected, self.wait_for_index)


class CreateParams(_WriteCommon):
    path: str
    content: str
    expected_sha256: str | None = None  # accepted for uniformity; the file must not exist


class WriteParams(_WriteCommon):
    path: str
    content: str
    mode: Literal["overwrite", "append"]
    expected_sha256: str | None = None


class ReplaceParams(_WriteCommon):
    path: str
    find: str = Field(description="exact text, non-empty")
    replace: str
    max_replacements: int | None = Field(None, description="default 1, first occurrences first")
    expected_sha256: str | None = None


class EditParams(_WriteCommon):
    path: str
    old_text: str | None = None
    new_text: str | None = None
    replace_all: bool | None = None
    insert_after_line: int | None = None
    insert_before_line: int | None = None
    content: str | None = None
    delete_lines: LineRange | None = None
    expected_sha256: str | None = None


class MoveParams(_WriteCommon):
    source: str
    destination: str
    # No field descriptions: both tool descriptions already say so (move and vault_move), and
    # every byte here is paid in each session of both profiles.
    update_links: bool = True
    expected_sha256: str | None = None


class DeleteParams(_WriteCommon):
    path: str
    permanent: bool = False  # "permanent=true deletes for good": in both tool descriptions
    expected_sha256: str | None = None


class MkdirParams(_WriteCommon):
    path: str


class StatParams(Params):
    path: NoteName


def _create(ctx: AppContext, p: CreateParams) -> Outcome[WriteResult]:
    return create_file(ctx, p.path, p.content, p.options())


def _write(ctx: AppContext, p: WriteParams) -> Outcome[WriteResult]:
    return write_file(ctx, p.path, p.content, p.mode, p.options())


def _replace(ctx: AppContext, p: ReplaceParams) -> Outcome[ReplaceResult]:
    return replace_text(ctx, ReplaceRequest(p.path, p.find, p.replace, p.max_replacements, p.options()))


def call_edit(ctx: AppContext, p: EditParams, tool: str = "vault_edit") -> Outcome[EditResult]:
    """vault_edit, and edit_file of the agent-files profile (`tool` names it in the record)."""
    dl = (p.delete_lines.start_line, p.delete_lines.end_line) if p.delete_lines is not None else None
    request = EditRequest(
        p.path,
        old_text=p.old_text,
        new_text=p.new_text,
        replace_all=p.replace_all,
        insert_after_line=p.insert_after_line,
        insert_before_line=p.insert_before_line,
        content=p.content,
        delete_lines=dl,
        options=p.options(),
        tool=tool,
    )
    return edit_file(ctx, request)


def call_move(ctx: AppContext, p: MoveParams) -> Outcome[MoveResult]:
    """vault_move, and move of the agent-files profile."""
    return move_path(ctx, p.source, p.destination, update_links=p.update_links, options=p.options())


def call_delete(ctx: AppContext, p: DeleteParams) -> Outcome[DeleteResult]:
    """vault_delete, and delete of the agent-files profile."""
    return delete_path(ctx, p.path, permanent=p.permanent, options=p.options())


def call_mkdir(ctx: AppContext, p: MkdirParams) -> Outcome[MkdirResult]:
    """vault_mkdir, and create_folder of the agent-files profile."""
    return make_folder(ctx, p.path, dry_run=p.dry_run)


def call_stat(ctx: AppContext, p: StatParams) -> Outcome[StatResult]:
    """vault_stat, and get_file_info of the agent-files profile."""
    return stat_path(ctx, p.path, snapshot_names(ctx.reader))


# Writes run race-safe (files/races.py): a vault changed under a write answers CONFLICT.
CREATE = Operation(
    name="create",
    mcp_name="vault_create",
    http_method="POST",
    http_path="/files/create",
    params=CreateParams,
    func=race_safe(_create),
    kind="write",
    destructive=False,
    idempotent=False,
    description="Create a new file and its folders; use it only for a path that does not exist (vault_write changes a file). daily/ takes daily/YYYY-MM-DD.md only.",
    title="Create file",
    result=WriteResult,
    cli_args=("path",),
    cli_help="Create a new note. Example: vault-agent create notes/idea.md --content '# Idea'",
    render=_render_write,
)

WRITE = Operation(
    name="write",
    mcp_name="vault_write",
    http_method="POST",
    http_path="/files/write",
    params=WriteParams,
    func=race_safe(_write),
    kind="write",
    destructive=True,
    idempotent=False,
    description="Overwrite or append to an existing file; use it to replace a whole file or add to its end (vault_edit changes a part).",
    title="Overwrite or append",
    result=WriteResult,
    cli_args=("path",),
    cli_options=(
        CliOption("--content", "content", help="text to write or append"),
        CliOption("--mode", "mode", help="overwrite | append (required)"),
        CliOption("--dry-run", "dry_run", bool, help="show the diff, change nothing"),
        CliOption("--expected-sha256", "expected_sha256", help=_SHA),
        CliOption("--wait-for-index", "wait_for_index", bool, help=_WAIT),
    ),
    cli_help="Append or overwrite. Example: vault-agent write notes/log.md --mode append --content '- done'",
    render=_render_write,
)

REPLACE = Operation(
    name="replace",
    mcp_name="vault_replace",
    http_method="POST",
    http_path="/files/replace",
    params=ReplaceParams,
    func=race_safe(_replace),
    kind="write",
    destructive=True,
    idempotent=False,
    description="Replace exact text (every occurrence, when there are at most max_replacements, default 1; CONFLICT and nothing changed otherwise); use it for a literal substitution (vault_edit for line edits).",
    title="Replace text",
    result=ReplaceResult,
    cli_args=("path",),
    cli_help="Replace text. Example: vault-agent replace notes/a.md --find 'TODO' --replace 'DONE'",
    render=_render_write,
)

EDIT = Operation(
    name="edit",
    mcp_name="vault_edit",
    http_method="POST",
    http_path="/files/edit",
    params=EditParams,
    func=race_safe(call_edit),
    kind="write",
    destructive=True,
    idempotent=False,
    description="Edit part of an existing file; use it for a change inside a file. One form per call: old_text+new_text, insert_after_line or insert_before_line+content, or delete_lines.",
    title="Edit part of a file",
    result=EditResult,
    cli_args=("path",),
    cli_options=(
        CliOption("--old-text", "old_text", help="text to replace (exact)"),
        CliOption("--new-text", "new_text", help="replacement text"),
        CliOption("--replace-all", "replace_all", bool, help="replace every occurrence"),
        CliOption("--insert-after-line", "insert_after_line", int, help="insert content after line N"),
        CliOption("--insert-before-line", "insert_before_line", int, help="insert content before line N"),
        CliOption("--content", "content", help="lines to insert"),
        CliOption("--delete-lines", "delete_lines", help="line range A-B to delete", convert=_line_range),
        CliOption("--dry-run", "dry_run", bool, help="show the diff, change nothing"),
        CliOption("--expected-sha256", "expected_sha256", help=_SHA),
        CliOption("--wait-for-index", "wait_for_index", bool, help=_WAIT),
    ),
    cli_help="Edit a note. Example: vault-agent edit notes/a.md --old-text 'draft' --new-text 'final'",
    render=_render_write,
)

MOVE = Operation(
    name="mv",
    mcp_name="vault_move",
    http_method="POST",
    http_path="/files/move",
    params=MoveParams,
    func=race_safe(call_move),
    kind="write",
    destructive=True,
    idempotent=False,
    description="Move or rename a file or folder, rewriting links to it; use it rather than create and delete so links keep working.",
    title="Move or rename",
    result=MoveResult,
    cli_args=("source", "destination"),
    cli_options=(
        CliOption("--dry-run", "dry_run", bool),
        CliOption("--wait-for-index", "wait_for_index", bool),
        CliOption("--update-links", "update_links", bool, help="rewrite links to the moved files"),
        CliOption("--expected-sha256", "expected_sha256", help=_SHA),
    ),
    cli_help="Move or rename. Example: vault-agent mv inbox/idea.md projects/idea.md",
    render=_render_write,
)

DELETE = Operation(
    name="rm",
    mcp_name="vault_delete",
    http_method="POST",
    http_path="/files/delete",
    params=DeleteParams,
    func=race_safe(call_delete),
    kind="write",
    destructive=True,
    idempotent=False,
    description="Delete a file or folder to the trash Obsidian uses; use it to remove notes recoverably (permanent=true deletes for good).",
    title="Delete to trash",
    result=DeleteResult,
    cli_args=("path",),
    cli_options=(
        CliOption("--dry-run", "dry_run", bool),
        CliOption("--wait-for-index", "wait_for_index", bool),
        CliOption("--permanent", "permanent", bool, help="delete for good, not to the trash"),
        CliOption("--expected-sha256", "expected_sha256"),
    ),
    cli_help="Move to trash. Example: vault-agent rm inbox/old.md",
    render=_render_write,
)

MKDIR = Operation(
    name="mkdir",
    mcp_name="vault_mkdir",
    http_method="POST",
    http_path="/files/mkdir",
    params=MkdirParams,
    func=race_safe(call_mkdir),
    kind="write",
    destructive=False,
    idempotent=True,
    description="Create a folder and its parents; use it only for an empty folder (writes create their folders).",
    title="Create folder",
    result=MkdirResult,
    cli_args=("path",),
    cli_help="Create a folder. Example: vault-agent mkdir projects/new",
    render=_render_write,
)

INFO = Operation(
    name="info",
    mcp_name="vault_stat",
    http_method="GET",
    http_path="/info",
    params=StatParams,
    func=call_stat,
    kind="read",
    description="Use it to check a path or get expected_sha256.",
    title="File info",
    result=StatResult,
    cli_args=("path",),
    cli_help="File info. Example: vault-agent info notes/a.md",
    render=_render_info,
)

OPERATIONS: tuple[Operation, ...] = (CREATE, WRITE, REPLACE, EDIT, MOVE, DELETE, MKDIR, INFO)
