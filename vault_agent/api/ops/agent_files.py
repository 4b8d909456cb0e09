"""Seed 003's agent file tools (`--tool-profile agent-files`): aliases with seed 003 names.

read_file, write_file, edit_file, move, delete, search_files, list_files, get_file_info,
create_folder: MCP-only (no HTTP route, no CLI command), listed only in the agent-files
profile, the write ones only with writes enabled. Same core functions as the default
tools underneath; outputs are reshaped SmartHole-style: a one-line `message` a model can
relay, plus the structured fields (line-numbered reads capped at 2,000 lines / 100,000
characters, with where to continue).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vault_agent.api.operation import AppContext, Operation, Params
from vault_agent.api.ops.agent_params import (
    LIST_DEFAULT,
    LIST_MAX,
    READ_MAX_CHARS,
    READ_MAX_LINES,
    ListFilesParams,
    ReadFileParams,
    SearchFilesParams,
    WriteFileParams,
)
from vault_agent.api.ops.files import (
    DeleteParams,
    EditParams,
    MkdirParams,
    MoveParams,
    StatParams,
    call_delete,
    call_edit,
    call_mkdir,
    call_move,
    call_stat,
)
from vault_agent.contracts import Outcome
from vault_agent.errors import out_of_range
from vault_agent.files.agent_models import (
    Done,
    FileEntry,
    FileInfoData,
    ListFilesData,
    Match,
    ReadFileData,
    SearchFilesData,
)
from vault_agent.files.content import put_file
from vault_agent.files.models import WriteOptions
from vault_agent.files.races import race_safe
from vault_agent.query.files import ReadRequest, vault_ls, vault_read
from vault_agent.query.grep import GrepRequest, vault_search
from vault_agent.query.limits import READ_ANSWER_CHARS


# ------------------------------------------------------------------------------ adapters
def _read_file(ctx: AppContext, p: ReadFileParams) -> Outcome[ReadFileData]:
    request = ReadRequest(
        p.path,
        full=True,
        has_range=p.start_line is not None or p.end_line is not None,
        start_line=p.start_line,
        end_line=p.end_line,
        max_chars=READ_MAX_CHARS,
        line_numbers=True,
        section_id=p.section_id,
        heading=p.heading,
        max_lines=READ_MAX_LINES,
        tool="read_file",
    )
    out = vault_read(ctx.vault, request, ctx.reader)
    d = out.data
    nxt = d.next_offset.start_line
    shown = f"lines {d.applied_range.start_line}-{d.applied_range.end_line}"
    more = f"; more from line {nxt} (pass start_line={nxt})" if nxt is not None else ""
    data = ReadFileData(
        path=d.path_read,  # the file actually read (a name or another case resolves to it)
        content=d.text,
        start_line=d.applied_range.start_line,
        end_line=d.applied_range.end_line,
        truncated=d.truncated,
        next_start_line=nxt,
        message=f"{shown}{more}",
    )
    return Outcome(data=data, warnings=out.warnings)


def _write_file(ctx: AppContext, p: WriteFileParams) -> Outcome[Done]:
    options = WriteOptions(p.dry_run, p.expected_sha256, p.wait_for_index)
    out = put_file(ctx, p.path, p.content, options)
    d = out.data
    verb = "would write" if p.dry_run else ("created" if d.created else "overwrote")
    msg = f"{verb} {d.written_path} ({d.size_bytes} bytes)"
    return Outcome(data=Done(message=msg, result=d.model_dump()), warnings=out.warnings)


def _edit_file(ctx: AppContext, p: EditParams) -> Outcome[Done]:
    out = call_edit(ctx, p, tool="edit_file")
    d = out.data
    msg = (
        f"{'would edit' if p.dry_run else 'edited'} {d.path} ({d.operation}, {d.replacements}); diff follows"
    )
    return Outcome(data=Done(message=msg, result=d.model_dump()), warnings=out.warnings)


def _move(ctx: AppContext, p: MoveParams) -> Outcome[Done]:
    out = call_move(ctx, p)
    d = out.data
    if not d.moved and not d.dry_run:
        msg = f"{d.source} is already at {d.destination}; nothing moved"
    else:
        msg = f"{'would move' if d.dry_run else 'moved'} {d.source} to {d.destination}"
        msg += f"; links rewritten in {len(d.links_updated)} files" if d.links_updated else ""
    return Outcome(data=Done(message=msg, result=d.model_dump()), warnings=out.warnings)


def _delete(ctx: AppContext, p: DeleteParams) -> Outcome[Done]:
    out = call_delete(ctx, p)
    d = out.data
    where = {"local": f"moved to {d.trashed_to}", "system": "moved to the system trash"}.get(
        d.method, "deleted permanently"
    )
    msg = f"{'would delete' if d.dry_run else 'deleted'} {d.deleted_path}: {where}"
    return Outcome(data=Done(message=msg, result=d.model_dump()), warnings=out.warnings)


def _create_folder(ctx: AppContext, p: MkdirParams) -> Outcome[Done]:
    out = call_mkdir(ctx, p)
    d = out.data
    if d.created:
        msg = f"{'would create' if p.dry_run else 'created'} folder {d.path}"
    else:
        msg = f"folder {d.path} already exists"
    return Outcome(data=Done(message=msg, result=d.model_dump()), warnings=out.warnings)


def _get_file_info(ctx: AppContext, p: StatParams) -> Outcome[FileInfoData]:
    out = call_stat(ctx, p)
    d = out.data
    size = f"{d.size_bytes} bytes" if d.size_bytes is not None else f"{d.entries} entries"
    data = FileInfoData(
        path=d.path,
        type=d.type,
        size=d.size_bytes,
        created=d.created,
        modified=d.modified,
        sha256=d.sha256,
        message=f"{d.type} {d.path}: {size}, modified {d.modified}",
    )
    return Outcome(data=data, warnings=out.warnings)


def _list_files(ctx: AppContext, p: ListFilesParams) -> Outcome[ListFilesData]:
    limit = LIST_DEFAULT if p.limit is None else p.limit
    if not 1 <= limit <= LIST_MAX:
        raise out_of_range("limit", 1, LIST_MAX)
    out = vault_ls(ctx.vault, p.path, glob=p.pattern, sort="mtime", limit=limit)
    files = [
        FileEntry(path=e.path, type="folder" if e.type == "dir" else "file", size_bytes=e.size_bytes)
        for e in out.data.entries
    ]
    truncated = out.data.next_cursor is not None
    msg = f"{len(files)} entries, newest first" + ("; more exist: narrow the pattern" if truncated else "")
    return Outcome(data=ListFilesData(files=files, truncated=truncated, message=msg), warnings=out.warnings)


def _search_files(ctx: AppContext, p: SearchFilesParams) -> Outcome[SearchFilesData]:
    request = GrepRequest(
        p.pattern,
        mode="regex",
        glob=p.file_pattern,
        relative_dir=p.path,
        limit=p.max_results,
        context_lines=p.context_lines,
        line_numbers=True,
    )
    out = vault_search(ctx.vault, ctx.reader, request)
    matches = [
        Match(
            path=h.path,
            line=h.line or 0,  # always set: line_numbers=True
            text=h.snippet,
            context_before=h.context_before,
            context_after=h.context_after,
        )
        for h in out.data.results
    ]
    truncated = any(w.code in ("RESULTS_TRUNCATED", "SEARCH_TIME_BUDGET") for w in out.warnings)
    files = len({m.path for m in matches})
    msg = f"{len(matches)} matching lines in {files} files" + ("; more exist" if truncated else "")
    return Outcome(
        data=SearchFilesData(matches=matches, truncated=truncated, message=msg), warnings=out.warnings
    )


def _alias(
    name: str,
    params: type[Params],
    func: Callable[[AppContext, Any], Outcome[Any]],
    description: str,
    **kw: Any,
) -> Operation:
    """A seed 003 tool: MCP only, listed in the agent-files profile, writes race-safe."""
    return Operation(
        name=name,
        mcp_name=name,
        http_method="POST" if kw.get("kind") == "write" else "GET",
        http_path=f"/agent-files/{name}",
        params=params,
        func=race_safe(func) if kw.get("kind") == "write" else func,
        description=description,
        profile="agent-files",
        mcp_only=True,
        **kw,
    )


READ_FILE = _alias(
    "read_file",
    ReadFileParams,
    _read_file,
    "A file with numbered lines, 2,000 a call; use it when you need line numbers to cite or edit by (next_start_line continues).",
    title="Read file (numbered)",
    result=ReadFileData,
    max_answer_chars=READ_ANSWER_CHARS,
)
WRITE_FILE = _alias(
    "write_file",
    WriteFileParams,
    _write_file,
    "Create or overwrite a whole file; use it when you have the full new content (edit_file changes a part).",
    title="Write file",
    result=Done,
    kind="write",
    destructive=True,
    idempotent=True,
)
EDIT_FILE = _alias(
    "edit_file",
    EditParams,
    _edit_file,
    "Edit part of a file and get a diff; use it for a change inside a file (write_file replaces it all). Forms: old_text+new_text, insert_after_line or insert_before_line+content, delete_lines.",
    title="Edit file",
    result=Done,
    kind="write",
    destructive=True,
    idempotent=False,
)
MOVE = _alias(
    "move",
    MoveParams,
    _move,
    "Move or rename a file or folder, rewriting links to it; use it rather than write and delete so links keep working.",
    title="Move file",
    result=Done,
    kind="write",
    destructive=True,
    idempotent=False,
)
DELETE = _alias(
    "delete",
    DeleteParams,
    _delete,
    "Move a file or folder to the trash; use it to remove notes recoverably (permanent=true deletes for good).",
    title="Delete file",
    result=Done,
    kind="write",
    destructive=True,
    idempotent=False,
)
SEARCH_FILES = _alias(
    "search_files",
    SearchFilesParams,
    _search_files,
    "Regex matches in file contents with line numbers; use it for exact text or patterns (search ranks topics).",
    title="Search file contents",
    result=SearchFilesData,
    long_running=True,
    core_params=(
        ("query", "pattern"),
        ("glob", "file_pattern"),
        ("relative_dir", "path"),
        ("limit", "max_results"),
    ),
)
LIST_FILES = _alias(
    "list_files",
    ListFilesParams,
    _list_files,
    "Files and folders, newest first; use it to see recent files or those matching a glob.",
    title="List files",
    result=ListFilesData,
    core_params=(("glob", "pattern"), ("relative_dir", "path")),
)
GET_FILE_INFO = _alias(
    "get_file_info",
    StatParams,
    _get_file_info,
    "Type, size, times and sha256 of a file or folder; use it to check a path exists or to get expected_sha256.",
    title="File info",
    result=FileInfoData,
)
CREATE_FOLDER = _alias(
    "create_folder",
    MkdirParams,  # path, plus dry_run / wait_for_index like every write (SPEC)
    _create_folder,
    "Create a folder with its parents (an existing one is reported); use it only for an empty folder.",
    title="Create folder",
    result=Done,
    kind="write",
    destructive=False,
    idempotent=True,
)

OPERATIONS: tuple[Operation, ...] = (
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    MOVE,
    DELETE,
    SEARCH_FILES,
    LIST_FILES,
    GET_FILE_INFO,
    CREATE_FOLDER,
)
