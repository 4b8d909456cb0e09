"""A plan (plan.py) evaluated over a snapshot's task columns (columns.py), segment by segment.

Each filter answers one boolean per candidate row of a segment; the filters of a plan run
cheapest first, each on the rows the ones before kept. The meanings are the Tasks plugin's
(as tasks-lang reads them, lang_eval.py's module doc): `done` is DONE, CANCELLED or
NON_TASK; a date search never matches an absent or invalid date, except `starts …`, which
also keeps tasks without a start date; `happens` is any of start, scheduled and due; `has …
date` counts an invalid date; text `includes` is case-insensitive, `regex` runs RE2;
descriptions are searched without the global filter, tags carry their `#`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.query.globmatch import compile_glob
from vault_agent.query.segment_columns import Vocab
from vault_agent.query.structured.values import US_PER_DAY
from vault_agent.query.tasks.columns import Bools, SegmentView, TaskSnapshot, Vocabs
from vault_agent.query.tasks.lang_ast import (
    DONE_TYPES,
    PRIORITIES,
    STATUS_TYPES,
    BoolOp,
    DateInvalid,
    DateIs,
    DatePresent,
    Done,
    Flag,
    Not,
    PriorityIs,
    Regex,
    StatusTypeIs,
    Substring,
    TextMatch,
)
from vault_agent.query.tasks.lang_columns import INVALID, MISSING, day_number
from vault_agent.query.tasks.plan import (
    AllOf,
    AnyOf,
    DateCmp,
    InFolder,
    LineCmp,
    NotP,
    PathGlob,
    Pred,
    StatusSymbolIs,
    TagIs,
)
from vault_agent.tag_syntax import tag_key
from vault_agent.task_dates import DateSearch

Rows = npt.NDArray[np.int64]
_DONE_CODES = sorted(STATUS_TYPES.index(t) for t in DONE_TYPES)
_IS_DONE = np.array([t in DONE_TYPES for t in STATUS_TYPES], np.bool_)  # by status type code
_PRIORITY_CODE = {name: code for code, name in enumerate(PRIORITIES)}
_HAPPENS = ("start", "scheduled", "due")
_COST: dict[type, int] = {Done: 0, StatusTypeIs: 0, StatusSymbolIs: 0, Flag: 0, PriorityIs: 0, DateIs: 1,
                          DatePresent: 1, DateInvalid: 1, InFolder: 2, TagIs: 2, PathGlob: 3, AnyOf: 3,
                          Not: 3, BoolOp: 3}  # fmt: skip


@dataclass
class Context:
    """One request's view of the tasks: the snapshot, the reader's vocabularies, today."""

    snap: TaskSnapshot
    vocabs: Vocabs
    today: dt.date
    note_tags: Vocab  # the notes' frontmatter tags as written (the reader's orientation vocabulary)
    _per_note: dict[tuple[object, int], Bools] = field(default_factory=dict)
    _tags: dict[tuple[TagIs, bool], Bools] = field(default_factory=dict)
    _note_texts: dict[tuple[str, int], pa.Array] = field(default_factory=dict)
    _written_tags: pa.Array | None = None

    def tag_codes(self, node: TagIs) -> Bools:
        """Per code of the tasks' tag vocabulary: whether it is `node.tag` or, nested, a child."""
        if (node, False) not in self._tags:
            self._tags[(node, False)] = _wanted(self.vocabs.tags, node, fold=False)
        return self._tags[(node, False)]

    def note_tag_codes(self, node: TagIs) -> Bools:
        """The same over the notes' tag vocabulary (spellings as written: compared folded)."""
        if (node, True) not in self._tags:
            self._tags[(node, True)] = _wanted(self.note_tags, node, fold=True)
        return self._tags[(node, True)]

    def note_texts(self, name: str, sv: SegmentView) -> pa.Array:
        """A text of every note row of one segment (path, folder, root, filename), made
        once a request."""
        k = (name, sv.tasks.segment_id)
        if k not in self._note_texts:
            make = _NOTE_TEXT[name]
            self._note_texts[k] = pa.array([make(p) for p in sv.tasks.note_paths], pa.string())
        return self._note_texts[k]

    def written_tags(self) -> pa.Array:
        """`#` and each tag as written, by code of the reader's vocabulary, made once a request."""
        if self._written_tags is None:
            vocab = self.vocabs.tag_texts
            self._written_tags = pa.array(["#" + vocab.name(c) for c in range(len(vocab))], pa.string())
        return self._written_tags

    def per_note(self, key: object, sv: SegmentView, test: Callable[[str], bool]) -> Bools:
        """A per-note-row boolean of one segment (folders, globs), computed once a request."""
        k = (key, sv.tasks.segment_id)
        if k not in self._per_note:
            self._per_note[k] = np.fromiter(
                (test(p) for p in sv.tasks.note_paths), np.bool_, len(sv.tasks.note_paths)
            )
        return self._per_note[k]


def _wanted(vocab: Vocab, node: TagIs, fold: bool) -> Bools:
    wanted = np.zeros(len(vocab) + 1, np.bool_)
    prefix = node.tag + "/"
    for code in range(len(vocab)):
        name = tag_key(vocab.name(code)) if fold else vocab.name(code)
        wanted[code] = name == node.tag or (node.nested and name.startswith(prefix))
    return wanted


# ---------------------------------------------------------------------------- text values
def _without_global_filter(texts: list[str], gf: str) -> list[str]:
    """DescriptionField.value: the global filter's first occurrence taken out, trimmed."""
    return [t.replace(gf, "", 1).strip() for t in texts] if gf else texts


def _folder(path: str) -> str:
    return path.rpartition("/")[0] + "/" if "/" in path else "/"


def _root(path: str) -> str:
    return path.split("/", 1)[0] + "/" if "/" in path else "/"


_NOTE_TEXT: dict[str, Callable[[str], str]] = {
    "path": lambda p: p,
    "folder": _folder,
    "root": _root,
    "filename": lambda p: p.rpartition("/")[2],
}


def text_values(sv: SegmentView, name: str, ctx: Context, rows: Rows) -> pa.Array:
    """A text field of some rows of the segment ('' where a task has none). Made per request
    from the compact columns (packed.py): a filter or sort on text is rarer than the memory
    its per-row strings would hold for as long as serve runs."""
    tasks = sv.tasks
    if name == "description":
        values = tasks.description.take(rows)
        gf = ctx.snap.settings.global_filter
        return pa.array(_without_global_filter(values.to_pylist(), gf), pa.string()) if gf else values
    if name in _NOTE_TEXT:
        return ctx.note_texts(name, sv).take(pa.array(tasks.note_row[rows]))
    if name == "heading":
        joined = tasks.heading_paths.array().to_pylist() or [""]
        last = pa.array([h.rpartition("\x00")[2] for h in joined], pa.string())
        return last.take(pa.array(tasks.heading[rows]))
    if name == "id":
        names = pa.array([ctx.vocabs.ids.name(c) for c in range(len(ctx.vocabs.ids))] + [""], pa.string())
        codes = tasks.id_code[rows].astype(np.int64)
        return names.take(pa.array(np.where(codes >= 0, codes, len(names) - 1)))
    if name == "status.name":
        status_names = ctx.snap.status_names
        table = pa.array(
            [status_names.get(c, "") for c in range(max(status_names, default=0) + 1)], pa.string()
        )
        return table.take(pa.array(tasks.symbol[rows]))
    return tasks.sparse[name].dense(tasks.size).take(pa.array(rows))  # recurrence


def tag_lists(sv: SegmentView, ctx: Context) -> tuple[pa.Array, npt.NDArray[np.int64]]:
    """Every row's tags as the plugin lists them (`#` first, the global filter left out):
    the flat values and the row each belongs to (ascending)."""
    gf = ctx.snap.settings.global_filter
    values = ctx.written_tags().take(pa.array(sv.tasks.tags_written))
    owner = np.asarray(sv.tasks.tags.rows, np.int64)
    if gf:
        keep = pc.not_equal(values, gf)
        values, owner = values.filter(keep), owner[np.asarray(keep.to_numpy(zero_copy_only=False), np.bool_)]
    return values, owner


def _search(values: pa.Array, matcher: Substring | Regex) -> Bools:
    if isinstance(matcher, Substring):
        hit = pc.match_substring(values, matcher.needle.lower())
    else:
        hit = pc.match_substring_regex(values, matcher.re2_pattern)
    return np.asarray(pc.fill_null(hit, False).to_numpy(zero_copy_only=False), np.bool_)


def _text(node: TextMatch, sv: SegmentView, rows: Rows, ctx: Context) -> Bools:
    substring = isinstance(node.matcher, Substring)
    if node.field == "tag":
        values, owner = tag_lists(sv, ctx)
        hit_rows = np.zeros(sv.tasks.size, np.bool_)
        if len(values):
            hit_rows[owner[_search(pc.utf8_lower(values) if substring else values, node.matcher)]] = True
        hit = hit_rows[rows]
    else:
        source = text_values(sv, node.field, ctx, rows)
        hit = _search(pc.utf8_lower(source) if substring else source, node.matcher)
    return ~hit if node.negate else hit


# ---------------------------------------------------------------------------- dates
def _date_matches(search: DateSearch, days: npt.NDArray[np.int32]) -> Bools:
    """Valid dates only (absent and invalid never match)."""
    start, end = day_number(search.range.start), day_number(search.range.end)
    rel = search.relation
    if rel == "before":
        hit = days < start
    elif rel == "after":
        hit = days > end
    elif rel == "on or before":
        hit = days <= end
    elif rel == "on or after":
        hit = days >= start
    else:
        hit = (days >= start) & (days <= end)
    return np.asarray(hit & (days != MISSING) & (days != INVALID), np.bool_)


def _fields(name: str) -> tuple[str, ...]:
    return _HAPPENS if name == "happens" else (name,)


def _dates(node: DateIs | DatePresent | DateInvalid, sv: SegmentView, rows: Rows) -> Bools:
    dates = sv.tasks.dates
    out = np.zeros(len(rows), np.bool_)
    for name in _fields(node.field):
        days = dates[name][rows]
        if isinstance(node, DateIs):
            out |= _date_matches(node.search, days)
            if node.field == "start":
                out |= days == MISSING  # StartDateField: a task without a start date can start any time
        elif isinstance(node, DatePresent):
            out |= days != MISSING
        else:
            out |= days == INVALID
    return out if not isinstance(node, DatePresent) or node.present else ~out


# ---------------------------------------------------------------------------- flags
def _flag(node: Flag, sv: SegmentView, rows: Rows, ctx: Context) -> Bools:
    tasks = sv.tasks
    if node.name == "recurring":
        values = tasks.recurring[rows]
    elif node.name in ("blocked", "blocking"):
        is_open = ~_IS_DONE[sv.status_type[rows]]
        if node.name == "blocked":
            values = is_open & _deps_hit(sv, ctx.snap.open_ids)[rows]
        else:
            codes = tasks.id_code[rows]
            values = (
                is_open & (codes >= 0) & ctx.snap.open_deps[np.clip(codes, 0, len(ctx.snap.open_deps) - 1)]
            )
    elif node.name == "tags":
        _, owner = tag_lists(sv, ctx)
        values = np.isin(rows, owner)
    elif node.name == "id":
        values = tasks.id_code[rows] >= 0
    elif node.name == "depends_on":
        values = np.isin(rows, tasks.deps.rows)
    else:  # top_level: no enclosing task
        values = tasks.parent_line[rows] == 0
    values = np.asarray(values, np.bool_)
    return values if node.value else ~values


def _deps_hit(sv: SegmentView, marked: Bools) -> Bools:
    """Per row of the segment: some id it depends on is marked."""
    deps = sv.tasks.deps
    out = np.zeros(sv.tasks.size, np.bool_)
    if len(deps.codes):
        hit = marked[np.clip(deps.codes, 0, len(marked) - 1)] & (deps.codes < len(marked))
        out[deps.rows[hit]] = True
    return out


# ---------------------------------------------------------------------------- plan nodes
def _tag(node: TagIs, sv: SegmentView, rows: Rows, ctx: Context) -> Bools:
    wanted = ctx.tag_codes(node)
    tasks = sv.tasks
    own = np.zeros(tasks.size, np.bool_)
    if len(tasks.tags.codes):
        hits = wanted[tasks.tags.codes]
        gf = ctx.snap.settings.global_filter
        gf_code = ctx.vocabs.tags.code(gf[1:].lower()) if gf.startswith("#") else None
        if gf_code is not None:  # the plugin lists a task's tags without the global filter
            hits &= tasks.tags.codes != gf_code
        own[tasks.tags.rows[hits]] = True
    hit = own[rows]
    if node.note and len(tasks.note_tags.codes):
        notes = np.zeros(len(tasks.note_paths), np.bool_)
        notes[tasks.note_tags.rows[ctx.note_tag_codes(node)[tasks.note_tags.codes]]] = True
        hit = hit | notes[tasks.note_row[rows]]
    return hit


def _per_note_test(node: InFolder | PathGlob) -> Callable[[str], bool]:
    if isinstance(node, InFolder):
        prefix = node.folder + "/"
        return lambda p: not node.folder or p.startswith(prefix)
    glob = compile_glob(node.glob)
    return (lambda p: True) if glob is None else glob


def mask(node: Pred, sv: SegmentView, rows: Rows, ctx: Context) -> Bools:
    """One boolean per row of `rows`: whether the task matches the node."""
    if isinstance(node, BoolOp):
        left = mask(node.left, sv, rows, ctx)
        if node.op == "XOR":
            return left ^ mask(node.right, sv, rows, ctx)
        todo = left if node.op == "AND" else ~left  # where the right side still matters
        out = left.copy()
        if todo.any():
            out[todo] = mask(node.right, sv, rows[todo], ctx)
        return out
    if isinstance(node, Not | NotP):
        return ~mask(node.child if isinstance(node, Not) else node.item, sv, rows, ctx)
    if isinstance(node, AllOf):
        out = np.ones(len(rows), np.bool_)
        for item in node.items:
            if out.any():
                out[out] = mask(item, sv, rows[out], ctx)
        return out
    if isinstance(node, AnyOf):
        out = np.zeros(len(rows), np.bool_)
        for item in node.items:
            todo = ~out
            if todo.any():
                out[todo] = mask(item, sv, rows[todo], ctx)
        return out
    return _leaf(node, sv, rows, ctx)


def _status(node: Done | StatusTypeIs | StatusSymbolIs, sv: SegmentView, rows: Rows, ctx: Context) -> Bools:
    if isinstance(node, Done):
        done = _IS_DONE[sv.status_type[rows]]
        return done if node.done else ~done
    if isinstance(node, StatusTypeIs):
        same = np.asarray(sv.status_type[rows] == STATUS_TYPES.index(node.status_type), np.bool_)
        return ~same if node.negate else same
    codes = [c for s in node.symbols if (c := ctx.vocabs.symbols.code(s)) is not None]
    return np.asarray(np.isin(sv.tasks.symbol[rows], codes), np.bool_)


def _leaf(node: Pred, sv: SegmentView, rows: Rows, ctx: Context) -> Bools:
    if isinstance(node, Done | StatusTypeIs | StatusSymbolIs):
        return _status(node, sv, rows, ctx)
    if isinstance(node, DateIs | DatePresent | DateInvalid):
        return _dates(node, sv, rows)
    if isinstance(node, PriorityIs):
        code, values = _PRIORITY_CODE[node.level], sv.tasks.priority[rows]
        ops = {"above": values < code, "below": values > code, "not": values != code}
        return np.asarray(ops.get(node.op, values == code), np.bool_)
    if isinstance(node, Flag):
        return _flag(node, sv, rows, ctx)
    if isinstance(node, TagIs):
        return _tag(node, sv, rows, ctx)
    if isinstance(node, InFolder | PathGlob):
        return np.asarray(ctx.per_note(node, sv, _per_note_test(node))[sv.tasks.note_row[rows]], np.bool_)
    if isinstance(node, TextMatch):
        return _text(node, sv, rows, ctx)
    if isinstance(node, DateCmp | LineCmp):
        return _compare(node, sv, rows)
    return mask(node, sv, rows, ctx)  # a combination (BoolOp, Not, AnyOf, AllOf, NotP)


_CMP = {
    "=": np.equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
}  # fmt: skip


def _compare(node: DateCmp | LineCmp, sv: SegmentView, rows: Rows) -> Bools:
    if isinstance(node, LineCmp):
        line = sv.tasks.line[rows].astype(np.float64) - (1 if node.zero_based else 0)
        return np.asarray(_CMP[node.op](line, node.value), np.bool_)
    days = sv.tasks.dates[node.field][rows].astype(np.int64)
    valid = (days != MISSING) & (days != INVALID)
    return np.asarray(valid & _CMP[node.op](days * US_PER_DAY, node.micros), np.bool_)


def matching(filters: tuple[Pred, ...], ctx: Context) -> list[Rows]:
    """Per segment of the snapshot (its order), the rows every filter keeps, in file order."""
    order = sorted(filters, key=lambda f: _COST.get(type(f), 5))
    out: list[Rows] = []
    for sv in ctx.snap.segments:
        rows: Rows = sv.rows.astype(np.int64)
        for node in order:
            if not len(rows):
                break
            rows = rows[mask(node, sv, rows, ctx)]
        out.append(rows)
    return out
