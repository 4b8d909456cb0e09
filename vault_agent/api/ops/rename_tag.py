"""vault_rename_tag on every surface (a write tool: listed and callable with --allow-writes).

The adapter hands the core (`files.rename_tag`) the snapshot's candidate notes
(`query.tag_candidates`); the core reads and writes the notes themselves.
"""

from __future__ import annotations

from pydantic import Field

from vault_agent.api.human.rename_tag import render_rename_tag
from vault_agent.api.operation import AppContext, CliOption, Operation, Params
from vault_agent.contracts import MAX_TAG_CHARS, Outcome
from vault_agent.files.models import RENAME_TAG_LIMIT_DEFAULT, RENAME_TAG_LIMIT_MAX, RenameTagResult
from vault_agent.files.races import race_safe
from vault_agent.files.rename_tag import RenameTagRequest, rename_tag
from vault_agent.query.tag_candidates import tag_candidates


class RenameTagParams(Params):
    old: str = Field(
        max_length=MAX_TAG_CHARS + 1, description="tag to rename, '#' optional; its children follow"
    )
    new: str = Field(max_length=MAX_TAG_CHARS + 1, description="new name; an existing tag merges")
    apply: bool = Field(False, description="write the notes (default: dry run with diffs)")
    limit: int = Field(
        RENAME_TAG_LIMIT_DEFAULT, ge=1, le=RENAME_TAG_LIMIT_MAX, description="notes listed with their diff"
    )
    cursor: str | None = Field(None, max_length=20, description="next_cursor of a dry run")
    wait_for_index: bool = False


def _rename_tag(ctx: AppContext, p: RenameTagParams) -> Outcome[RenameTagResult]:
    request = RenameTagRequest(p.old, p.new, p.apply, p.limit, p.cursor, p.wait_for_index)
    return rename_tag(ctx, request, lambda tag: tag_candidates(ctx.reader, tag))


RENAME_TAG = Operation(
    name="rename-tag",
    mcp_name="vault_rename_tag",
    http_method="POST",
    http_path="/files/rename-tag",
    params=RenameTagParams,
    func=race_safe(_rename_tag),
    kind="write",
    destructive=True,
    idempotent=False,
    description="Rename a tag and its nested tags in every note (frontmatter and #tags, never code or links); use it instead of editing notes one by one. Dry run with diffs unless apply=true.",
    title="Rename tag",
    result=RenameTagResult,
    cli_args=("old", "new"),
    cli_options=(
        CliOption("--apply", "apply", bool, help="write the notes (default: dry run)"),
        CliOption("--limit", "limit", int, help="notes listed with their diff (1-50, default 10)"),
        CliOption("--cursor", "cursor", help="next page of a dry run"),
        CliOption("--wait-for-index", "wait_for_index", bool, help="return once the index holds the writes"),
    ),
    cli_help="Rename a tag across the vault. Example: vault-agent rename-tag project/old project/new --apply",
    render=render_rename_tag,
)

OPERATIONS: tuple[Operation, ...] = (RENAME_TAG,)
