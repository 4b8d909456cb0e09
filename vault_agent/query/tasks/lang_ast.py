"""The typed syntax tree of a Tasks query (what `lang_parse` builds and `lang_eval` runs).

Each filter node can print itself back as the canonical instruction (`render`), so a parsed
query can be shown, logged by shape and re-read (the parser's property tests do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vault_agent.task_dates import DateSearch

DateField = Literal["due", "scheduled", "start", "created", "done", "cancelled", "happens"]
TextField = Literal[
    "description", "path", "folder", "root", "filename", "heading", "status.name", "tag", "id", "recurrence"
]  # fmt: skip
StatusType = Literal["TODO", "DONE", "IN_PROGRESS", "ON_HOLD", "CANCELLED", "NON_TASK"]
PriorityName = Literal["highest", "high", "medium", "none", "low", "lowest"]
PriorityOp = Literal["is", "above", "below", "not"]
FlagName = Literal["recurring", "blocked", "blocking", "tags", "id", "depends_on", "top_level"]
BoolOpName = Literal["AND", "OR", "XOR"]
SortField = Literal[
    "status", "status.name", "status.type", "recurring", "priority", "urgency", "happens", "cancelled",
    "created", "start", "scheduled", "due", "done", "path", "description", "tag", "heading", "filename",
    "id", "random",
]  # fmt: skip
GroupField = Literal[
    "status", "status.name", "status.type", "recurring", "priority", "urgency", "happens", "cancelled",
    "created", "start", "scheduled", "due", "done", "path", "folder", "root", "backlink", "tags",
    "heading", "filename", "recurrence", "id",
]  # fmt: skip

DATE_FIELDS: tuple[DateField, ...] = ("due", "scheduled", "start", "created", "done", "cancelled", "happens")
PRIORITIES: tuple[PriorityName, ...] = ("highest", "high", "medium", "none", "low", "lowest")  # high → low
STATUS_TYPES: tuple[StatusType, ...] = ("TODO", "DONE", "IN_PROGRESS", "ON_HOLD", "CANCELLED", "NON_TASK")
DONE_TYPES: frozenset[str] = frozenset({"DONE", "CANCELLED", "NON_TASK"})  # the plugin's `done`


@dataclass(frozen=True)
class Done:
    """`done` / `not done`: status type DONE, CANCELLED or NON_TASK (or not)."""

    done: bool

    def render(self) -> str:
        return "done" if self.done else "not done"


@dataclass(frozen=True)
class StatusTypeIs:
    status_type: StatusType
    negate: bool

    def render(self) -> str:
        return f"status.type {'is not' if self.negate else 'is'} {self.status_type}"


@dataclass(frozen=True)
class DateIs:
    """`due before next week`, `happens in 2023-W14`: the date field against a date or range."""

    field: DateField
    search: DateSearch

    def render(self) -> str:
        name = "starts" if self.field == "start" else self.field
        rng = self.search.range
        when = (
            rng.start.isoformat() if rng.is_single_day() else f"{rng.start.isoformat()} {rng.end.isoformat()}"
        )
        return f"{name} {self.search.relation} {when}"


@dataclass(frozen=True)
class DatePresent:
    """`has due date` (present=True) / `no due date`; an invalid date counts as present."""

    field: DateField
    present: bool

    def render(self) -> str:
        return f"{'has' if self.present else 'no'} {self.field} date"


@dataclass(frozen=True)
class DateInvalid:
    """`due date is invalid`: the field is written but is no calendar date."""

    field: DateField

    def render(self) -> str:
        return f"{self.field} date is invalid"


@dataclass(frozen=True)
class Substring:
    """Case-insensitive substring (the plugin's `includes`)."""

    needle: str


@dataclass(frozen=True)
class Regex:
    """A `/pattern/flags` search, already translated to RE2 syntax (`lang_regex`)."""

    source: str  # as written between the slashes
    flags: str
    re2_pattern: str  # what the engine runs


@dataclass(frozen=True)
class TextMatch:
    field: TextField
    matcher: Substring | Regex
    negate: bool

    def render(self) -> str:
        if isinstance(self.matcher, Substring):
            op = "does not include" if self.negate else "includes"
            return f"{self.field} {op} {self.matcher.needle}"
        op = "regex does not match" if self.negate else "regex matches"
        return f"{self.field} {op} /{self.matcher.source}/{self.matcher.flags}"


@dataclass(frozen=True)
class PriorityIs:
    op: PriorityOp
    level: PriorityName

    def render(self) -> str:
        return f"priority is {self.level}" if self.op == "is" else f"priority is {self.op} {self.level}"


_FLAG_TEXT: dict[tuple[str, bool], str] = {
    ("recurring", True): "is recurring",
    ("recurring", False): "is not recurring",
    ("blocked", True): "is blocked",
    ("blocked", False): "is not blocked",
    ("blocking", True): "is blocking",
    ("blocking", False): "is not blocking",
    ("tags", True): "has tags",
    ("tags", False): "no tags",
    ("id", True): "has id",
    ("id", False): "no id",
    ("depends_on", True): "has depends on",
    ("depends_on", False): "no depends on",
    ("top_level", True): "exclude sub-items",
}


@dataclass(frozen=True)
class Flag:
    """A yes/no property: `is recurring`, `is blocked`, `has tags`, `exclude sub-items`…"""

    name: FlagName
    value: bool

    def render(self) -> str:
        return _FLAG_TEXT[(self.name, self.value)]


@dataclass(frozen=True)
class Not:
    child: Filter

    def render(self) -> str:
        return f"NOT ({self.child.render()})"


@dataclass(frozen=True)
class BoolOp:
    op: BoolOpName
    left: Filter
    right: Filter

    def render(self) -> str:
        return f"({self.left.render()}) {self.op} ({self.right.render()})"


Filter = (
    Done | StatusTypeIs | DateIs | DatePresent | DateInvalid | TextMatch | PriorityIs | Flag | Not | BoolOp
)


@dataclass(frozen=True)
class SortKey:
    field: SortField
    reverse: bool = False
    tag_index: int = 1  # `sort by tag 2`: the second tag

    def render(self) -> str:
        index = f" {self.tag_index}" if self.field == "tag" and self.tag_index != 1 else ""
        return f"sort by {self.field}{' reverse' if self.reverse else ''}{index}"


@dataclass(frozen=True)
class GroupKey:
    field: GroupField
    reverse: bool = False

    def render(self) -> str:
        return f"group by {self.field}{' reverse' if self.reverse else ''}"


@dataclass(frozen=True)
class FilterLine:
    """One filter instruction and where the user wrote it."""

    line: int
    filter: Filter


@dataclass
class Query:
    """A whole query: filters (all must hold), sorts (before the plugin's default order),
    groups, limits; display-only instructions are counted, not kept."""

    filters: list[FilterLine] = field(default_factory=list)
    sorts: list[SortKey] = field(default_factory=list)
    groups: list[GroupKey] = field(default_factory=list)
    limit: int | None = None
    group_limit: int | None = None
    explain: bool = False
    ignore_global_query: bool = False
    display_only: int = 0  # hide/show/short/full/view list lines accepted and ignored

    def render(self) -> str:
        """The canonical text of the query (dates as ISO ranges: a re-read needs no today)."""
        lines = [f.filter.render() for f in self.filters]
        lines += [s.render() for s in self.sorts] + [g.render() for g in self.groups]
        if self.limit is not None:
            lines.append(f"limit {self.limit}")
        if self.group_limit is not None:
            lines.append(f"limit groups {self.group_limit}")
        return "\n".join(lines)
