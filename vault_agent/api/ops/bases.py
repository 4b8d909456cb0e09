"""vault_base on every surface: the vault's bases, a base's views, one view's rows."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from vault_agent.api.human.bases import render_base
from vault_agent.api.operation import NOTE_NAME, AppContext, CliOption, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.query.bases import run
from vault_agent.query.bases.models import MAX_PATH_CHARS, BaseData, BaseRequest

OptionalName = Annotated[str | None, NOTE_NAME]  # a NoteName that may be left out


# Lean on purpose: every character of this schema is paid in each agent session (docs/mcp.md);
# `path`: a .base file, `Note.md#N` (a base block), or a note (its bases), each as people
# name it (names.resolve_name), and so is `this` (not a CLI argument: a flag); the core checks limits.
class BaseParams(Params):
    path: OptionalName = Field(default=None, max_length=MAX_PATH_CHARS)
    view: str | None = Field(default=None, max_length=MAX_PATH_CHARS)  # a name, or an index ("0")
    this: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    limit: int | None = None  # 1-500, checked by the core (run.LIMIT_MAX)
    cursor: str | None = None


def _base(ctx: AppContext, p: BaseParams) -> Outcome[BaseData]:
    request = BaseRequest(path=p.path, view=p.view, this=p.this, limit=p.limit, cursor=p.cursor)
    return run.vault_base(ctx.reader, request, cache=ctx.snapshot_cache, clock=ctx.clock)


BASE = Operation(
    name="base",
    mcp_name="vault_base",
    http_method="POST",
    http_both=True,
    http_path="/bases",
    params=BaseParams,
    func=_base,
    title="Bases views",
    description="Run or list saved Obsidian Bases views; use it.",
    result=BaseData,
    cli_args=("path",),
    cli_help='List bases, or run a view as saved. Example: vault-agent base Reading.base --view "To read"',
    cli_options=(
        CliOption("--view", "view", help="The view to run: its name or index (0 is the first)."),
        CliOption(
            "--this", "this", help="The note `this` stands for (default: the base, or the note holding it)."
        ),
        CliOption("--limit", "limit", int, "Rows (or bases) per page, 1-500 (default 50)."),
        CliOption("--cursor", "cursor", help="next_cursor of the previous page."),
    ),
    render=render_base,
)

OPERATIONS: tuple[Operation, ...] = (BASE,)
