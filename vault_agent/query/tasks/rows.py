"""Selected tasks as `TaskRow`s: the columns of a page of matches turned back into values.

Dates come back as the text the note holds (`YYYY-MM-DD`, or an invalid date as written,
named in `invalid_dates`); tags as written, the global filter's tag left out (as the plugin
lists them), and the description without the global filter when the plugin's settings hide
it (`removeGlobalFilter`, its removeAsWordFrom rule).
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np

from vault_agent.query.tasks.columns import NOTATIONS, SegmentView
from vault_agent.query.tasks.evaluate import Context, Rows
from vault_agent.query.tasks.lang_ast import STATUS_TYPES
from vault_agent.query.tasks.lang_columns import EPOCH, INVALID, MISSING
from vault_agent.query.tasks.order import Selection
from vault_agent.task_model import TaskRow
from vault_agent.task_syntax import DATE_FIELDS, PRIORITY_NAMES, PRIORITY_NONE


def remove_as_word(description: str, gf: str) -> str:
    """GlobalFilter.removeAsWordFrom: the filter taken out where it is a whole word."""
    if not gf:
        return description
    pattern = re.compile(r"(^|\s)" + re.escape(gf) + r"($|\s)")
    if pattern.search(description):
        description = pattern.sub(r"\1\2", description).replace("  ", " ", 1).strip()
    return description


def _date_text(sv: SegmentView, name: str, row: int, days: int) -> str | None:
    if days == MISSING:
        return None
    if days == INVALID:
        return sv.tasks.invalid_text.get((name, row), "")
    return (EPOCH + dt.timedelta(days=days)).isoformat()


def _segment_rows(sv: SegmentView, rows: Rows, ctx: Context) -> list[TaskRow]:
    tasks, settings = sv.tasks, ctx.snap.settings
    gf = settings.global_filter
    descriptions = tasks.description.texts(rows)
    headings = tasks.heading_paths.texts(tasks.heading[rows])
    days = {n: tasks.dates[n][rows].tolist() for n in DATE_FIELDS}
    written = ctx.vocabs.tag_texts
    tag_start = np.searchsorted(tasks.tags.rows, rows)
    tag_end = np.searchsorted(tasks.tags.rows, rows, side="right")
    note_tags = tasks.note_tags
    ids, deps = ctx.vocabs.ids, tasks.deps
    out: list[TaskRow] = []
    for k, row in enumerate(rows.tolist()):
        dates = {n: _date_text(sv, n, row, days[n][k]) for n in DATE_FIELDS}
        priority = int(tasks.priority[row])
        description = descriptions[k]
        id_code = int(tasks.id_code[row])
        out.append(
            TaskRow(
                path=tasks.note_paths[int(tasks.note_row[row])],
                line=int(tasks.line[row]),
                status=ctx.vocabs.symbols.name(int(tasks.symbol[row])),
                status_type=STATUS_TYPES[int(sv.status_type[row])],
                status_name=ctx.snap.status_names.get(int(tasks.symbol[row]), ""),
                description=remove_as_word(description, gf) if settings.remove_global_filter else description,
                tags=[
                    t
                    for t in (written.name(int(c)) for c in tasks.tags_written[tag_start[k] : tag_end[k]])
                    if "#" + t != gf
                ],
                note_tags=[
                    ctx.note_tags.name(int(c)) for c in note_tags.codes[note_tags.rows == tasks.note_row[row]]
                ],
                heading_path=headings[k].split("\x00") if headings[k] else [],
                parent_line=int(tasks.parent_line[row]) or None,
                invalid_dates=[n for n in DATE_FIELDS if days[n][k] == INVALID],
                priority=None if priority == PRIORITY_NONE else PRIORITY_NAMES[priority],  # type: ignore[arg-type]
                recurrence=tasks.sparse["recurrence"].get(row),
                id=ids.name(id_code) if id_code >= 0 else None,
                depends_on=[ids.name(int(c)) for c in deps.codes[deps.rows == row]],
                on_completion=tasks.sparse["on_completion"].get(row),
                notation=NOTATIONS[int(tasks.notation[row])],  # type: ignore[arg-type]
                **dates,
            )
        )
    return out


def task_rows(selection: Selection, ctx: Context) -> list[TaskRow]:
    """The `TaskRow` of every selected task, in the selection's order."""
    found: dict[tuple[int, int], TaskRow] = {}
    for k in np.unique(selection.segment).tolist():
        sv = ctx.snap.segments[k]
        rows = np.unique(selection.row[selection.segment == k])
        for row, task in zip(rows.tolist(), _segment_rows(sv, rows, ctx), strict=True):
            found[(k, row)] = task
    return [found[(int(s), int(r))] for s, r in zip(selection.segment, selection.row, strict=True)]
