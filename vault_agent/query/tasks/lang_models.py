"""What a Tasks query adds to `vault_tasks`' answer: its groups and the block that ran."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vault_agent.task_model import TaskRow


def _none(value: object) -> bool:
    return value is None


class TaskGroupOut(BaseModel):
    """One group of a `group by` query: its heading at each level (as Obsidian shows it),
    how many tasks it holds (before `limit groups`) and this page's part of them."""

    names: list[str]
    total: int
    tasks: list[TaskRow]


class BlockRef(BaseModel):
    """The ```tasks block that ran: its note, its 1-based index there (`block: PATH#INDEX`),
    the line of its opening fence, the heading above it."""

    model_config = ConfigDict(frozen=True)

    path: str
    index: int
    line: int
    heading: str | None = Field(default=None, exclude_if=_none)
