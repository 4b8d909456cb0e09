"""A note's tasks: the `tasks` table's rows (docs/tasks.md "What is indexed").

A task is a list item (the block parser's, so a `- [ ]` line in a code block, a lazy
paragraph continuation or an HTML block is none) whose first line is a checkbox line
(`task_syntax`). Frontmatter lines and `%% … %%` comments are blanked before this runs.
Each row keeps what the line says (status symbol, description, the fields' text) and where
it stands: its 1-based line, the heading path of its section (`section`: the texts joined
by NUL), and `parent_line`, the line
of the nearest list item around it that is a task (plain items between are looked through).
What depends on the Tasks plugin's settings (status types, the global filter) is applied by
readers from the snapshot's settings, so those settings never force a re-parse.
"""

from __future__ import annotations

import bisect
from typing import Any

from vault_agent.task_syntax import DATE_FIELDS, TaskLine, parse_task_line

# The longest task line read (a line past it is kept as a task with its text cut, so a
# pathological line cannot cost more than this many characters of regex work).
MAX_TASK_LINE_CHARS = 4_000


def _row(rel: str, line_no: int, task: TaskLine, parent: int, section: str) -> dict[str, Any]:
    """One row, its keys in the TASKS_SCHEMA order."""
    row: dict[str, Any] = {
        "path": rel,
        "line": line_no,
        "parent_line": parent or None,
        "status": task.status,
        "description": task.description,
        "tags": list(task.tags),
        "section": section,
    }
    for kind in DATE_FIELDS:
        row[kind] = task.values.get(kind)
    row["priority"] = task.priority
    row["recurrence"] = task.values.get("recurrence")
    row["id"] = task.values.get("id")
    row["depends_on"] = list(task.depends_on)
    row["on_completion"] = task.values.get("on_completion")
    row["notation"] = task.notation
    return row


def task_rows(
    rel: str,
    lines: list[str],
    items: list[tuple[int, int]],
    headings: list[tuple[int, list[str]]],
) -> list[dict[str, Any]]:
    """The rows of the tasks among `items` ((line, enclosing item line or 0), from the block
    parser); `lines[k]` is file line k + 1; `headings` are (line, heading path), in order."""
    heading_lines = [line for line, _ in headings]
    parents: dict[int, int] = {}  # item line → enclosing item line
    tasks: dict[int, TaskLine] = {}
    for line_no, parent in items:
        parents.setdefault(line_no, parent)
        text = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        if "[" not in text:
            continue
        task = parse_task_line(text[:MAX_TASK_LINE_CHARS])
        if task is not None:
            tasks.setdefault(line_no, task)
    rows: list[dict[str, Any]] = []
    for line_no in sorted(tasks):
        up = parents.get(line_no, 0)
        seen = 0
        while up and up not in tasks and seen < len(parents):  # a plain item: look through it
            up, seen = parents.get(up, 0), seen + 1
        at = bisect.bisect_left(heading_lines, line_no) - 1
        section = "\x00".join(headings[at][1]) if at >= 0 else ""
        rows.append(_row(rel, line_no, tasks[line_no], up if up in tasks else 0, section))
    return rows
