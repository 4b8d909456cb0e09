"""`TaskRow`: one task as the index holds it and every task answer returns it.

A task is a checkbox list item outside code, comments and frontmatter (`task_syntax` reads
the line). The row joins what the line says with where it stands: the note's path, its
1-based line, the heading path of its section, the nearest enclosing task (`parent_line`),
and the note's own tags. Status type and name come from the snapshot's Tasks settings
(`task_settings`). Dates are the text as written (`YYYY-MM-DD`); one that is no calendar date
is kept and named in `invalid_dates`. On the wire keys are camelCase and fields without a
value are left out, so a plain task costs a few dozen characters.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from vault_agent.task_settings import StatusType

PriorityName = Literal["highest", "high", "medium", "low", "lowest"]
TaskNotation = Literal["emoji", "dataview", "mixed"]


def _none(value: object) -> bool:
    return value is None


def _empty(value: object) -> bool:
    return not value


class TaskRow(BaseModel):
    """One task (module doc)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    path: str
    line: int
    status: str  # the symbol between the brackets
    status_type: StatusType
    status_name: str
    description: str
    tags: list[str]  # the task's own inline tags (as the Tasks plugin lists them)
    note_tags: list[str] = Field(default_factory=list, exclude_if=_empty)  # the note's tags
    heading_path: list[str] = Field(default_factory=list, exclude_if=_empty)
    parent_line: int | None = Field(default=None, exclude_if=_none)
    due: str | None = Field(default=None, exclude_if=_none)
    scheduled: str | None = Field(default=None, exclude_if=_none)
    start: str | None = Field(default=None, exclude_if=_none)
    created: str | None = Field(default=None, exclude_if=_none)
    done: str | None = Field(default=None, exclude_if=_none)
    cancelled: str | None = Field(default=None, exclude_if=_none)
    invalid_dates: list[str] = Field(default_factory=list, exclude_if=_empty)
    priority: PriorityName | None = Field(default=None, exclude_if=_none)
    recurrence: str | None = Field(default=None, exclude_if=_none)
    id: str | None = Field(default=None, exclude_if=_none)
    depends_on: list[str] = Field(default_factory=list, exclude_if=_empty)
    on_completion: str | None = Field(default=None, exclude_if=_none)
    notation: TaskNotation | None = Field(default=None, exclude_if=_none)
