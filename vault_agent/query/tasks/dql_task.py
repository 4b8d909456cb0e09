"""DQL `TASK` in vault_query: a Dataview task query over the same task index (docs/tasks.md
"DQL TASK").

`TASK [FROM …] [WHERE …] [SORT …] [LIMIT n]` is parsed by the Dataview parser
(structured/dql_parse.py) and compiled here into a task plan (plan.py), constants folded as
for LIST and TABLE (`date(today) - dur(7 days)`). Dataview's task fields:

- `completed` (status `x` or `X`), `checked` (any status but a space), `status` (the symbol);
- `text` (the description), `line` (0-based, as Dataview counts), `path` and `file.path`,
  `file.name`, `file.folder`, `section` (the heading above the task, its text);
- `due`, `scheduled`, `start`, `created`, `completion`, `cancelled` (dates: compared with a
  constant date; absent or invalid never match a comparison; alone, "has one");
- `tags` (`contains(tags, "#x")`, case-insensitively; alone, "has tags"), `priority`
  (the Dataview field's text, `= "high"`).

FROM takes `#tag` (the note's tags, nested), `"folder"` and a note path, with and/or/not.
Anything else (page fields, `fullyCompleted`, `children`, `parent`, link sources, other
functions) is INVALID_QUERY naming it. Results are tasks in Dataview's order: the SORT keys,
then path and line; each is a vault_query result whose `properties` hold the task's fields.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import InvalidQuery
from vault_agent.property_values import iso_of_micros
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_fold import ConstFolder
from vault_agent.query.structured.dql_parse import parse_dql
from vault_agent.query.structured.dql_where import fold_tag
from vault_agent.query.structured.relations import dead_by_segment, live_notes, page_notes
from vault_agent.query.structured.request import (
    QueryData,
    QueryRequest,
    QueryResult,
    decode_cursor,
    encode_cursor,
)
from vault_agent.query.structured.values import Clock, Lit
from vault_agent.query.tasks.lang_ast import (
    DatePresent,
    Flag,
    PriorityIs,
    Regex,
    SortKey,
    Substring,
    TextField,
    TextMatch,
)
from vault_agent.query.tasks.plan import (
    AllOf,
    AnyOf,
    DateCmp,
    InFolder,
    LineCmp,
    NotP,
    Pred,
    StatusSymbolIs,
    TagIs,
    TaskPlan,
)
from vault_agent.query.tasks.rows import task_rows
from vault_agent.query.tasks.run import select
from vault_agent.task_model import TaskRow

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader

DateName = Literal["due", "scheduled", "start", "created", "done", "cancelled"]
DATES: dict[str, DateName] = {
    "due": "due", "scheduled": "scheduled", "start": "start", "created": "created",
    "completion": "done", "cancelled": "cancelled",
}  # fmt: skip
TEXTS: dict[str, TextField] = {
    "text": "description", "path": "path", "file.path": "path", "file.name": "filename",
    "file.folder": "folder", "section": "heading",
}  # fmt: skip
SORTS: dict[str, str] = {
    "due": "due", "scheduled": "scheduled", "start": "start", "created": "created", "completion": "done",
    "cancelled": "cancelled", "text": "description", "path": "path", "file.path": "path",
    "file.name": "filename", "section": "heading", "completed": "status", "priority": "priority",
}  # fmt: skip
KNOWN = frozenset({*DATES, *TEXTS, "line", "status", "priority", "completed", "checked"})
_CMP = ("=", "!=", "<", "<=", ">", ">=")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
_DONE = frozenset({"x", "X"})


def _name(expr: A.Expr) -> str | None:
    """`due`, `file.path`: the field an expression names, lower-cased, or None."""
    if isinstance(expr, A.Ident):
        return expr.name.lower()
    if isinstance(expr, A.Member) and isinstance(expr.obj, A.Ident):
        return f"{expr.obj.name.lower()}.{expr.name.lower()}"
    return None


class TaskCompiler:
    """A parsed TASK query → a task plan (module doc)."""

    def __init__(self, text: str, clock: Clock) -> None:
        self.consts = ConstFolder(text, clock)

    def task_plan(self, query: A.Query) -> TaskPlan:
        preds: list[Pred] = [self.task_source(query.source)] if query.source is not None else []
        preds += [self.task_cond(e) for e in query.where]
        sorts = tuple(self.task_sort(item) for item in query.sort)
        return TaskPlan(filters=tuple(preds), sorts=sorts, limit=query.limit, default_order=False)

    def task_sort(self, item: A.SortItem) -> SortKey:
        name = _name(item.expr)
        if name not in SORTS:
            raise self.consts.refuse(f"SORT by {name or 'an expression'} in a TASK query", item.expr)
        return SortKey(SORTS[name], item.descending)  # type: ignore[arg-type]  # SORTS' values are sort fields

    def task_source(self, src: A.Source) -> Pred:
        if isinstance(src, A.STag):
            return TagIs(fold_tag(src.tag), nested=True)
        if isinstance(src, A.SFolder):
            path = src.path.strip().strip("/")
            if not path:
                return AllOf(())
            if path.lower().endswith(".md"):
                return TextMatch("path", _exact(path), negate=False)
            return AnyOf((InFolder(path), TextMatch("path", _exact(path + ".md"), negate=False)))
        if isinstance(src, A.SAnd | A.SOr):
            parts = (self.task_source(src.left), self.task_source(src.right))
            return AllOf(parts) if isinstance(src, A.SAnd) else AnyOf(parts)
        if isinstance(src, A.SNot):
            return NotP(self.task_source(src.item))
        raise self.consts.refuse("a link source in a TASK query", src)

    def task_cond(self, expr: A.Expr) -> Pred:
        if isinstance(expr, A.Binary) and expr.op in ("and", "or"):
            parts = (self.task_cond(expr.left), self.task_cond(expr.right))
            return AllOf(parts) if expr.op == "and" else AnyOf(parts)
        if isinstance(expr, A.Unary) and expr.op == "!":
            return NotP(self.task_cond(expr.operand))
        if isinstance(expr, A.Binary) and expr.op in _CMP:
            return self.task_comparison(expr)
        if isinstance(expr, A.Call) and expr.name in ("contains", "icontains"):
            return self.task_contains(expr)
        name = _name(expr)
        if name is not None:
            return self.task_truthy(name, expr)
        raise self.consts.refuse("this expression as a condition of a TASK query", expr)

    def task_truthy(self, name: str, node: A.Expr) -> Pred:
        if name == "completed":
            return StatusSymbolIs(_DONE)
        if name == "checked":
            return NotP(StatusSymbolIs(frozenset({" "})))
        if name in DATES:
            return DatePresent(DATES[name], present=True)
        if name == "tags":
            return Flag("tags", True)
        raise self.consts.refuse(f"the field '{name}' in a TASK query", node)

    def task_comparison(self, expr: A.Binary) -> Pred:
        left, right = _name(expr.left), _name(expr.right)
        name, other, op = (
            (left, expr.right, expr.op) if left is not None else (right, expr.left, _FLIP[expr.op])
        )
        value = self.consts.const(other)
        if name is None or value is None:
            raise self.consts.refuse("this comparison (compare a task field with a constant)", expr)
        if op == "!=":
            return NotP(self.field_cmp(name, "=", value, expr))
        return self.field_cmp(name, op, value, expr)

    def field_cmp(self, name: str, op: str, value: Lit, node: A.Expr) -> Pred:
        if name not in KNOWN:
            raise self.consts.refuse(f"the field '{name}' in a TASK query", node)
        if name in DATES:
            if value.kind != "date" or not isinstance(value.value, int):
                raise self.consts.refuse(f"comparing {name} with something that is not a date", node)
            return DateCmp(DATES[name], op, value.value)  # type: ignore[arg-type]  # _CMP minus !=
        if name == "line" and value.kind == "number" and isinstance(value.value, float):
            return LineCmp(op, value.value)  # type: ignore[arg-type]
        text = value.value if value.kind == "string" and isinstance(value.value, str) else None
        if op == "=" and text is not None:
            if name == "status":
                return StatusSymbolIs(frozenset({text}))
            if name == "priority" and text.lower() in ("highest", "high", "medium", "low", "lowest", "none"):
                return PriorityIs("is", text.lower())  # type: ignore[arg-type]
            if name in TEXTS:
                return TextMatch(TEXTS[name], _exact(text), negate=False)
        if name in ("completed", "checked") and op == "=" and value.kind == "boolean":
            truth = self.task_truthy(name, node)
            return truth if value.value else NotP(truth)
        raise self.consts.refuse(f"'{name} {op}' with this value in a TASK query", node)

    def task_contains(self, call: A.Call) -> Pred:
        if len(call.args) != 2:
            raise InvalidQuery(f"dql: {call.name}() takes two arguments at {self.consts.at(call)}")
        name, value = _name(call.args[0]), self.consts.const(call.args[1])
        text = value.value if value is not None and value.kind == "string" else None
        if name is None or not isinstance(text, str):
            raise self.consts.refuse(
                f"this use of {call.name}() in a TASK query (contains(field, text))", call
            )
        if name == "tags":
            return TagIs(fold_tag(text), nested=False, note=False)
        if name in TEXTS:
            matcher = Substring(text) if call.name == "icontains" else _literal(text)
            return TextMatch(TEXTS[name], matcher, negate=False)
        raise self.consts.refuse(f"{call.name}({name}, …) in a TASK query", call)


def _re2(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() and c != " " and ord(c) < 128 else c for c in text)


def _literal(text: str) -> Regex:
    """Case-sensitive substring (Dataview's contains)."""
    return Regex(source=text, flags="", re2_pattern=_re2(text))


def _exact(text: str) -> Regex:
    return Regex(source=text, flags="", re2_pattern=f"^{_re2(text)}$")


def is_task_query(text: str) -> bool:
    """Whether a DQL text is a TASK query (its first word)."""
    first = text.strip().split(None, 1)
    return bool(first) and first[0].lower() == "task"


def _properties(task: TaskRow) -> dict[str, Any]:
    """The task's fields under Dataview's names."""
    props: dict[str, Any] = {
        "line": task.line - 1,
        "status": task.status,
        "text": task.description,
        "completed": task.status in _DONE,
        "section": task.heading_path[-1] if task.heading_path else None,
        "statusType": task.status_type,
    }
    for ours, theirs in (("due", "due"), ("scheduled", "scheduled"), ("start", "start"), ("created", "created"),
                         ("done", "completion"), ("cancelled", "cancelled")):  # fmt: skip
        if getattr(task, ours) is not None:
            props[theirs] = getattr(task, ours)
    for name in ("priority", "recurrence", "id"):
        if getattr(task, name) is not None:
            props["repeat" if name == "recurrence" else name] = getattr(task, name)
    return {k: v for k, v in props.items() if v is not None}


def vault_query_tasks(
    reader: SnapshotReader, request: QueryRequest, limit: int, clock: Clock
) -> Outcome[QueryData]:
    """A DQL TASK query's page: each result a task (its note's path, title and mtime, the
    task's tags, its fields as properties).

    Raises:
        InvalidQuery: a construct a TASK query does not support (named), or a syntax error.
        InvalidParameter: a cursor of another query.
    """
    assert request.dql is not None
    plan = TaskCompiler(request.dql, clock).task_plan(parse_dql(request.dql))
    today: dt.date = clock().date()
    fingerprint = request.fingerprint()
    offset, cursor_snapshot = decode_cursor(request.cursor, fingerprint)
    with reader.acquire() as view:
        ctx, selection = select(reader, view, plan, today)
        total = len(selection) if plan.limit is None else min(len(selection), plan.limit)
        page = task_rows(selection.take(offset, min(offset + limit, total)), ctx)
        notes = page_notes(live_notes(reader, view, dead_by_segment(view)), sorted({t.path for t in page}))
        by_path = {n["path"]: n for n in notes}
        warnings = [*view.warnings()]
        snapshot_id, freshness = view.manifest.snapshot_id, view.freshness
    if cursor_snapshot is not None and cursor_snapshot != snapshot_id:
        warnings.append(
            WarningItem(
                code="CURSOR_SNAPSHOT_CHANGED",
                message="the index changed since the previous page; results may repeat or skip a task",
            )
        )
    results = [
        QueryResult(
            path=t.path,
            title=by_path[t.path]["title"] or "" if t.path in by_path else "",
            tags=["#" + tag for tag in t.tags],
            mtime=iso_of_micros(int(by_path[t.path]["mtime_ns"]) // 1000) if t.path in by_path else "",
            properties=_properties(t),
        )
        for t in page
    ]
    end = offset + len(results)
    data = QueryData(
        results=results,
        total=total,
        next_cursor=encode_cursor(end, fingerprint, snapshot_id) if results and end < total else None,
        indexFreshness=freshness,
    )
    return Outcome(data=data, warnings=warnings, freshness=freshness)
