"""A Tasks query's text as a typed `Query` (lang_ast), or INVALID_QUERY naming the line.

Each statement (lang_lines) is tried as the plugin's src/Query/Query.ts does: preset, layout
(`short mode`, `full mode`, `explain`, `ignore global query`), `limit`, `sort by`,
`group by`, `view`, `hide|show`, a comment, then a filter (lang_filters), the boolean
combination last. Instructions are case-insensitive; boolean operators are capitals. Where
the plugin reads a prefix and ignores the rest of a line (`sort by due date` is its `sort by
due`), this parser wants the whole line and refuses the rest: an instruction is run as
written or not at all. Error messages name the line and the construct, never echo the text.
"""

from __future__ import annotations

import datetime as dt
import re

from vault_agent.errors import InvalidQuery
from vault_agent.query.tasks.lang_ast import FilterLine, GroupField, GroupKey, Query, SortField, SortKey
from vault_agent.query.tasks.lang_filters import parse_filter
from vault_agent.query.tasks.lang_lines import QueryFile, Statement, statements

MAX_TASKS_QUERY_CHARS = 20_000
MAX_LIMIT = 1_000_000_000
MAX_PRESET_DEPTH = 5

# The plugin's default presets (src/Query/Presets/Presets.ts); a vault's own presets live in
# the plugin's settings, which vault-agent does not read: they are refused as unknown.
DEFAULT_PRESETS = {
    "this_file": "path includes {{query.file.path}}",
    "this_folder": "folder includes {{query.file.folder}}",
    "this_folder_only": "filter by function task.file.folder === query.file.folder",
    "this_root": "root includes {{query.file.root}}",
    "hide_date_fields": "hide due date\nhide scheduled date\nhide start date\nhide created date\n"
    "hide done date\nhide cancelled date",
    "hide_non_date_fields": "hide id\nhide depends on\nhide recurrence rule\nhide on completion\nhide priority",
    "hide_query_elements": "hide toolbar\nhide postpone button\nhide edit button\nhide backlinks\nhide task count",
    "hide_everything": "preset hide_date_fields\npreset hide_non_date_fields\npreset hide_query_elements",
}

_SORT_FIELDS: tuple[SortField, ...] = (
    "status.name", "status.type", "status", "recurring", "priority", "urgency", "happens", "cancelled",
    "created", "start", "scheduled", "due", "done", "path", "description", "heading", "filename", "id",
    "random",
)  # fmt: skip
_GROUP_FIELDS: tuple[GroupField, ...] = (
    "status.name", "status.type", "status", "recurring", "priority", "urgency", "happens", "cancelled",
    "created", "start", "scheduled", "due", "done", "path", "folder", "root", "backlink", "tags",
    "heading", "filename", "recurrence", "id",
)  # fmt: skip
_HIDE_SHOW_OPTIONS = (
    "backlink", "edit button", "nested backlink", "postpone button", "task count", "group count",
    "toolbar", "tree", "urgency", "cancelled date", "created date", "depends on", "done date",
    "due date", "id", "on completion", "priority", "recurrence rule", "scheduled date", "start date",
    "tags",
)  # fmt: skip

_LIMIT = re.compile(r"limit (groups )?(to )?(\d+)( tasks?)?", re.I)
_SORT_BY = re.compile(r"sort by\s+(.*)", re.I)
_GROUP_BY = re.compile(r"group by\s+(.*)", re.I)
_SORT_TAG = re.compile(r"tags?( reverse)?\s*(\d+)?", re.I)
_FIELD_REVERSE = re.compile(r"(\S+?)( reverse)?", re.I)
_FUNCTION = re.compile(r"function\b", re.I)
_HIDE_SHOW = re.compile(r"(hide|show) +(.*)", re.I)
_VIEW = re.compile(r"view +(.*)", re.I)
_PRESET = re.compile(r"preset +(.*)", re.I)


def _refuse(st: Statement, what: str) -> InvalidQuery:
    return InvalidQuery(f"tasks query: {st.where()}: {what} (see docs/tasks.md)")


def _javascript(st: Statement, instruction: str) -> InvalidQuery:
    return _refuse(st, f"`{instruction} function` runs JavaScript, which vault-agent never runs")


def _sort_key(st: Statement, rest: str) -> SortKey:
    if _FUNCTION.match(rest):
        raise _javascript(st, "sort by")
    if m := _SORT_TAG.fullmatch(rest):
        index = int(m[2]) if m[2] else 1
        if not 1 <= index <= 1000:
            raise _refuse(st, "`sort by tag N` takes N from 1 to 1000")
        return SortKey("tag", bool(m[1]), index)
    m = _FIELD_REVERSE.fullmatch(rest)
    name = m[1].lower() if m else ""
    for field in _SORT_FIELDS:
        if m and name == field:
            return SortKey(field, bool(m[2]))
    raise _refuse(st, "`sort by` names a field vault-agent does not sort by")


def _group_key(st: Statement, rest: str, instruction: str = "group by") -> GroupKey:
    if _FUNCTION.match(rest):
        raise _javascript(st, instruction)
    m = _FIELD_REVERSE.fullmatch(rest)
    name = m[1].lower() if m else ""
    for field in _GROUP_FIELDS:
        if m and name == field:
            return GroupKey(field, bool(m[2]))
    raise _refuse(st, f"`{instruction}` names a field vault-agent does not group by")


class _Parser:
    def __init__(self, today: dt.date, query_file: QueryFile | None) -> None:
        self.today, self.query_file = today, query_file
        self.query = Query()
        self.column_group: GroupKey | None = None

    def layout(self, st: Statement, low: str) -> bool:
        """Display-only and mode instructions; True when the statement was one."""
        if low in ("short", "short mode", "full", "full mode"):
            self.query.display_only += 1
        elif low == "explain":
            self.query.explain = True
        elif low == "ignore global query":
            self.query.ignore_global_query = True
        elif m := _HIDE_SHOW.fullmatch(st.text):
            if not m[2].lower().startswith(_HIDE_SHOW_OPTIONS):
                raise _refuse(st, "`hide`/`show` names a layout element the Tasks plugin does not have")
            self.query.display_only += 1
        elif m := _VIEW.fullmatch(st.text):
            self.view(st, m[1].strip())
        else:
            return False
        return True

    def view(self, st: Statement, mode: str) -> None:
        word, _, rest = mode.partition(" ")
        if word.lower() == "list" and not rest.strip():
            self.column_group = None
            self.query.display_only += 1
        elif word.lower() == "columns" and rest.strip():
            by = re.fullmatch(r"by\s+(.*)", rest.strip(), re.I)
            if by is None:
                raise _refuse(st, "`view columns` takes `by <field>`, as `group by` does")
            self.column_group = _group_key(st, by[1], "view columns by")
        else:
            raise _refuse(st, "`view` takes `list` or `columns by <field>`")

    def statement(self, st: Statement, preset_depth: int = 0) -> None:
        low = " ".join(st.text.lower().split())
        if m := _PRESET.fullmatch(st.text):
            self.preset(st, m[1].strip(), preset_depth)
        elif self.layout(st, low):
            pass
        elif m := _LIMIT.fullmatch(st.text):
            number = int(m[3]) if len(m[3]) <= 10 else MAX_LIMIT + 1
            if number > MAX_LIMIT:
                raise _refuse(st, f"`limit` takes at most {MAX_LIMIT}")
            if m[1]:
                self.query.group_limit = number
            else:
                self.query.limit = number
        elif m := _SORT_BY.fullmatch(st.text):
            self.query.sorts.append(_sort_key(st, m[1].strip()))
        elif m := _GROUP_BY.fullmatch(st.text):
            self.query.groups.append(_group_key(st, m[1].strip()))
        elif st.is_comment():
            pass
        else:
            node = parse_filter(st.text, st.where(), self.today)
            self.query.filters.append(FilterLine(st.first_line, node))

    def preset(self, st: Statement, name: str, depth: int) -> None:
        if name not in DEFAULT_PRESETS:
            raise _refuse(
                st,
                "`preset` names a preset vault-agent does not know (the plugin's defaults are read, "
                "not the vault's own presets in its settings)",
            )
        if depth >= MAX_PRESET_DEPTH:
            raise _refuse(st, f"presets nested more than {MAX_PRESET_DEPTH} deep")
        for inner in statements(DEFAULT_PRESETS[name], self.query_file):
            self.statement(Statement(st.first_line, st.last_line, inner.text), depth + 1)

    def finish(self) -> Query:
        if self.column_group is not None:
            self.query.groups.insert(0, self.column_group)
        return self.query


def parse_query(text: str, today: dt.date, query_file: QueryFile | None = None) -> Query:
    """The query as written, relative dates resolved against `today`; `query_file` is the
    note of the block it came from (for `{{query.file.…}}` and the `this_*` presets).

    Raises:
        InvalidQuery: the first statement that is not a supported instruction, named by
            its line number and construct.
    """
    if len(text) > MAX_TASKS_QUERY_CHARS:
        raise InvalidQuery(f"tasks query: longer than {MAX_TASKS_QUERY_CHARS} characters")
    parser = _Parser(today, query_file)
    for st in statements(text, query_file):
        parser.statement(st)
    return parser.finish()
