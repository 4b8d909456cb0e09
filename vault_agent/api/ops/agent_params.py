"""Parameters of seed 003's agent file tools (`--tool-profile agent-files`).

Kept apart from the adapters in `agent_files.py` so each module has one job: these models
are what MCP's input schemas are generated from; the limits are the core's constants.
edit_file, move, delete and create_folder take the default profile's parameters
(`api/ops/files.py`: EditParams, MoveParams, DeleteParams, MkdirParams): one model per core.
"""

from __future__ import annotations

from pydantic import Field

from vault_agent.api.operation import NoteName, Params
from vault_agent.query.limits import LS_MAX_ENTRIES, MAX_CONTEXT_LINES, READ_HARD_MAX_CHARS, SEARCH_MAX_LIMIT

READ_MAX_LINES = 2_000
READ_MAX_CHARS = READ_HARD_MAX_CHARS
LIST_DEFAULT = 200
LIST_MAX = LS_MAX_ENTRIES  # vault_ls lists no more, so a larger limit would promise nothing


class ReadFileParams(Params):
    path: NoteName
    start_line: int | None = None
    end_line: int | None = None
    section_id: str | None = None
    heading: str | None = None


class WriteFileParams(Params):
    path: str
    content: str
    expected_sha256: str | None = None
    dry_run: bool = False
    wait_for_index: bool = False


class SearchFilesParams(Params):
    pattern: str = Field(description="regex, matched line by line")
    file_pattern: str | None = Field(None, description="case-insensitive glob")
    path: str | None = Field(None, description="folder; default the whole vault")
    context_lines: int | None = Field(None, ge=0, le=MAX_CONTEXT_LINES)
    max_results: int | None = Field(None, ge=1, le=SEARCH_MAX_LIMIT, description="default 50")


class ListFilesParams(Params):
    pattern: str | None = Field(None, description="case-insensitive glob")
    path: str | None = Field(None, description="folder; default the vault root")
    limit: int | None = Field(None, ge=1, le=LIST_MAX, description=f"default {LIST_DEFAULT}")
