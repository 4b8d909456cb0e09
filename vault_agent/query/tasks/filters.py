"""`vault_tasks`' filters, checked and compiled to a plan (plan.py); docs/tasks.md "Filters".

All filters are optional and all must hold:

- `status`: any of: `open` (todo, in progress, on hold: the plugin's `not done`), `closed`
  (done, cancelled, non-task: its `done`), a status type (`todo`, `done`, `in_progress`,
  `on_hold`, `cancelled`, `non_task`), or one character, the symbol between the brackets;
- `due`, `scheduled`, `start`, `done`: `[before|after|on|in|on or before|on or after] <date
  or range>` in the Tasks plugin's phrases (dates.py: `2024-05-01`, `today`, `tomorrow`, `in
  3 days`, `next week`, `2024-05-01 2024-05-31` …), or `none`, `any`, `invalid`;
- `overdue`: open with a (valid) due date before today (false: every other task);
- `priority`: any of `highest high medium none low lowest`, or `above X` / `below X`;
- `tags`: each one, on the task or its note, nested (`project` matches `project/alpha`),
  case-insensitive, `#` optional;
- `folder` (and below), `glob` (query/globmatch.py), `heading` (the section's heading
  holds the text), `text` (the description holds it), both case-insensitive;
- `recurring`, `blocked` (depends on an open task): true or false;
- `sort`: comma-separated keys (`due`, `scheduled`, `start`, `created`, `done`, `priority`,
  `urgency`, `path`, `status`, `description` …), `-` in front reverses one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass
from typing import get_args

from vault_agent.contracts import MAX_QUERY_CHARS
from vault_agent.errors import InvalidParameter, InvalidQuery
from vault_agent.paths.rules import normalize_rel_path
from vault_agent.query.globmatch import compile_glob
from vault_agent.query.tasks.lang_ast import (
    PRIORITIES,
    BoolOp,
    DateField,
    DateInvalid,
    DateIs,
    DatePresent,
    Done,
    Filter,
    Flag,
    Not,
    PriorityIs,
    PriorityName,
    SortField,
    SortKey,
    StatusType,
    StatusTypeIs,
    Substring,
    TextMatch,
)
from vault_agent.query.tasks.plan import AnyOf, InFolder, PathGlob, Pred, StatusSymbolIs, TagIs, TaskPlan
from vault_agent.tag_syntax import clean_tag, tag_key
from vault_agent.task_dates import DateRange, DateSearch, parse_date_search

MAX_LIST_ITEMS = 20  # entries of `status`, `priority`, `tags`
_TYPE_NAMES: dict[str, StatusType] = {t.lower(): t for t in get_args(StatusType)}
_PRIORITY_NAMES: dict[str, PriorityName] = {p: p for p in PRIORITIES}
_SORT_FIELDS = frozenset(get_args(SortField)) - {"random"}
SORT_NAMES = " ".join(sorted(_SORT_FIELDS))


@dataclass(frozen=True)
class TaskFilters:
    """The filters of one `vault_tasks` request (module doc); None / () = not given."""

    status: tuple[str, ...] = ()
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    done: str | None = None
    overdue: bool | None = None
    priority: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    folder: str | None = None
    glob: str | None = None
    heading: str | None = None
    text: str | None = None
    recurring: bool | None = None
    blocked: bool | None = None
    sort: str | None = None

    def fingerprint(self) -> str:
        """What a cursor belongs to: these filters (the page aside)."""
        text = json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _check_sizes(f: TaskFilters) -> None:
    for name in ("status", "priority", "tags"):
        items: tuple[str, ...] = getattr(f, name)
        if len(items) > MAX_LIST_ITEMS:
            raise InvalidParameter.about(name, f"takes at most {MAX_LIST_ITEMS} entries")
        if any(len(i) > MAX_QUERY_CHARS for i in items):
            raise InvalidParameter.about(name, f"has an entry over {MAX_QUERY_CHARS} characters")
    for name in ("due", "scheduled", "start", "done", "folder", "glob", "heading", "text", "sort"):
        value = getattr(f, name)
        if value is not None and len(value) > MAX_QUERY_CHARS:
            raise InvalidParameter.about(name, f"is over {MAX_QUERY_CHARS} characters")


def _status(entries: tuple[str, ...]) -> Pred | None:
    if not entries:
        return None
    items: list[Pred] = []
    for raw in entries:
        word = raw.strip().lower().replace(" ", "_").replace("-", "_")
        if len(raw) == 1:
            items.append(StatusSymbolIs(frozenset({raw})))
        elif word in ("open", "not_done"):
            items.append(Done(False))
        elif word == "closed":
            items.append(Done(True))
        elif word in _TYPE_NAMES:
            items.append(StatusTypeIs(_TYPE_NAMES[word], negate=False))
        else:
            raise InvalidQuery(
                "status: each entry is open, closed, a status type "
                "(todo done in_progress on_hold cancelled non_task) or one status character"
            )
    return items[0] if len(items) == 1 else AnyOf(tuple(items))


def _date(name: DateField, text: str | None, today: dt.date) -> Filter | None:
    if text is None:
        return None
    word = text.strip().lower()
    if word in ("none", "no"):
        return DatePresent(name, present=False)
    if word in ("any", "has"):
        return DatePresent(name, present=True)
    if word == "invalid":
        return DateInvalid(name)
    search = parse_date_search(text, today)
    if search is None:
        raise InvalidQuery(
            f"{name}: not a date; use [before|after|on|in] and a date or range "
            "(2024-05-01, today, in 3 days, next week, 2024-05-01 2024-05-31), or none, any, invalid"
        )
    return DateIs(name, search)


def overdue_filter(today: dt.date) -> Filter:
    """Open, with a valid due date before today."""
    return BoolOp("AND", Done(False), DateIs("due", DateSearch("before", DateRange(today, today))))


def _priority(entries: tuple[str, ...]) -> Pred | None:
    if not entries:
        return None
    items: list[Pred] = []
    for raw in entries:
        words = raw.strip().lower().split()
        op = words[0] if len(words) == 2 and words[0] in ("above", "below") else "is"
        level = words[-1] if len(words) in (1, 2) and (len(words) == 1 or op != "is") else ""
        if level not in PRIORITIES:
            raise InvalidQuery(
                f"priority: each entry is one of {' '.join(PRIORITIES)}, or above/below one of them"
            )
        name = _PRIORITY_NAMES[level]
        items.append(PriorityIs("above" if op == "above" else "below" if op == "below" else "is", name))
    return items[0] if len(items) == 1 else AnyOf(tuple(items))


def _tags(entries: tuple[str, ...]) -> list[Pred]:
    out: list[Pred] = []
    for i, raw in enumerate(entries):
        name = tag_key(clean_tag(raw)).rstrip("/")
        if not name:
            raise InvalidQuery(f"tags[{i}]: expected a tag name")
        out.append(TagIs(name))
    return out


def _sort(text: str | None) -> tuple[SortKey, ...]:
    if text is None or not text.strip():
        return ()
    keys: list[SortKey] = []
    for part in text.split(","):
        name = part.strip()
        reverse = name.startswith("-")
        name = name.lstrip("-").strip().lower()
        if name not in _SORT_FIELDS:
            raise InvalidQuery(f"sort: each key is one of {SORT_NAMES}, '-' in front to reverse it")
        keys.append(SortKey(name, reverse))  # type: ignore[arg-type]  # checked just above
    return tuple(keys)


def compile_filters(f: TaskFilters, today: dt.date) -> TaskPlan:
    """The plan of the filters (their AND) with their sort keys.

    Raises:
        InvalidQuery: an entry that is not a status, date, priority, tag or sort key.
        InvalidParameter: too many entries, too long, or a malformed glob.
        InvalidPath: a folder outside the vault.
    """
    _check_sizes(f)
    preds: list[Pred | None] = [_status(f.status), _priority(f.priority), *_tags(f.tags)]
    preds += [_date("due", f.due, today), _date("scheduled", f.scheduled, today)]
    preds += [_date("start", f.start, today), _date("done", f.done, today)]
    if f.overdue is not None:
        preds.append(overdue_filter(today) if f.overdue else Not(overdue_filter(today)))
    if f.folder is not None:
        folder = normalize_rel_path(f.folder.strip().rstrip("/"), allow_root=True)
        preds.append(InFolder(folder) if folder else None)
    if f.glob is not None and compile_glob(f.glob) is not None:
        preds.append(PathGlob(f.glob))
    if f.heading is not None and f.heading.strip():
        preds.append(TextMatch("heading", Substring(f.heading.strip()), negate=False))
    if f.text is not None and f.text.strip():
        preds.append(TextMatch("description", Substring(f.text.strip()), negate=False))
    if f.recurring is not None:
        preds.append(Flag("recurring", f.recurring))
    if f.blocked is not None:
        preds.append(Flag("blocked", f.blocked))
    return TaskPlan(filters=tuple(p for p in preds if p is not None), sorts=_sort(f.sort))
