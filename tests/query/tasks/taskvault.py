"""A generated vault of tasks, and an independent evaluation of vault_tasks over its files.

`generate(root, seed, settings)` writes notes with tasks in both notations (fields always at
the end of a line, in a fixed order), nested by four spaces a level (sometimes through a
plain item), statuses ` x X / - ? ! Q`, dates around TODAY (some no calendar date),
priorities, recurrence, ids and dependencies, inline and frontmatter tags, and decoys: task
lines in fenced code, in `%%` comments and in frontmatter. With `settings`, the vault gets
the Tasks plugin's data.json: global filter `#task` (then ~70% of the lines carry it) and
custom statuses (`!` on hold, `Q` non-task).

`Oracle` reads the files back with its own line rules (no indexer code: frontmatter fences,
fences and `%%` lines toggle, `# ` headings, four spaces a level, fields found by their own
patterns) and answers `vault_tasks` filters and sorts in plain Python, following
docs/tasks.md and the plugin's comparators (urgency from src/Task/Urgency.ts).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_agent.query.tasks.lang_order import natural_key

TODAY = dt.date(2024, 6, 12)  # a Wednesday
FOLDERS = ["", "projects", "projects/alpha", "areas", "Archive"]
TAGS = ["home", "work", "work/urgent", "Work/Later", "errand"]
WORDS = ["call", "email", "bank", "report", "garden", "milk", "plan", "review", "Draft", "fix", "2 boxes"]
HEADINGS = ["Today", "Work", "Home", "Later", "Ideas"]
STATUSES = [" "] * 10 + ["x"] * 4 + ["X", "/", "/", "-", "?", "!", "Q"]
EMOJI = {"due": "📅", "scheduled": "⏳", "start": "🛫", "created": "➕", "done": "✅", "cancelled": "❌"}
DATAVIEW = {"due": "due", "scheduled": "scheduled", "start": "start", "created": "created", "done": "completion",
            "cancelled": "cancelled"}  # fmt: skip
PRIORITY = {"🔺": "highest", "⏫": "high", "🔼": "medium", "🔽": "low", "⏬": "lowest"}
PRIORITIES = ["highest", "high", "medium", "none", "low", "lowest"]
RULES = ["every day", "every week", "every 2 weeks"]
GLOBAL_FILTER = "#task"
SETTINGS = {
    "globalFilter": GLOBAL_FILTER,
    "statusSettings": {
        "coreStatuses": [
            {"symbol": " ", "name": "Todo", "nextStatusSymbol": "x", "type": "TODO"},
            {"symbol": "x", "name": "Done", "nextStatusSymbol": " ", "type": "DONE"},
        ],
        "customStatuses": [
            {"symbol": "/", "name": "In Progress", "nextStatusSymbol": "x", "type": "IN_PROGRESS"},
            {"symbol": "-", "name": "Cancelled", "nextStatusSymbol": " ", "type": "CANCELLED"},
            {"symbol": "!", "name": "Waiting", "nextStatusSymbol": " ", "type": "ON_HOLD"},
            {"symbol": "Q", "name": "Question", "nextStatusSymbol": " ", "type": "NON_TASK"},
        ],
    },
}
DEFAULT_TYPES = {" ": "TODO", "x": "DONE", "X": "DONE", "/": "IN_PROGRESS", "-": "CANCELLED"}
CUSTOM_TYPES = {" ": "TODO", "x": "DONE", "X": "DONE", "/": "IN_PROGRESS", "-": "CANCELLED", "!": "ON_HOLD",
                "Q": "NON_TASK"}  # fmt: skip


def _date(rng: random.Random, rollover: bool = True) -> str:
    if rng.random() < 0.06:
        return rng.choice(
            ["2024-02-30", "2024-06-31", "2024-13-01"] if rollover else ["2024-13-01", "2024-00-10"]
        )
    return (TODAY + dt.timedelta(days=rng.randint(-40, 40))).isoformat()


class _Writer:
    def __init__(self, rng: random.Random, gf: bool, rollover: bool) -> None:
        self.rng = rng
        self.gf = gf
        self.rollover = rollover
        self.ids = 0

    def task(self, indent: str) -> str:
        rng = self.rng
        words = rng.sample(WORDS, rng.randint(1, 3))
        if rng.random() < 0.3:
            words.insert(1, "#" + rng.choice(TAGS))
        if self.gf and rng.random() < 0.7:
            words.insert(0, GLOBAL_FILTER)
        parts = [f"{indent}- [{rng.choice(STATUSES)}] " + " ".join(words)]
        dataview = rng.random() < 0.35
        if rng.random() < 0.4:
            emoji, name = rng.choice(list(PRIORITY.items()))
            parts.append(f"[priority:: {name}]" if dataview else emoji)
        if rng.random() < 0.15:
            rule = rng.choice(RULES)
            parts.append(f"[repeat:: {rule}]" if dataview else f"🔁 {rule}")
        for kind, share in (
            ("created", 0.2),
            ("start", 0.2),
            ("scheduled", 0.3),
            ("due", 0.6),
            ("done", 0.2),
        ):
            if rng.random() < share:
                value = _date(rng, self.rollover)
                parts.append(f"[{DATAVIEW[kind]}:: {value}]" if dataview else f"{EMOJI[kind]} {value}")
        if rng.random() < 0.2:
            self.ids += 1
            parts.append(f"[id:: t{self.ids}]" if dataview else f"🆔 t{self.ids}")
        if self.ids and rng.random() < 0.2:
            dep = f"t{rng.randint(1, self.ids)}"
            parts.append(f"[dependsOn:: {dep}]" if dataview else f"⛔ {dep}")
        return " ".join(parts)

    def note(self) -> list[str]:
        rng = self.rng
        out: list[str] = []
        if rng.random() < 0.6:
            tags = rng.sample(TAGS, rng.randint(0, 2))
            out += ["---", f"tags: [{', '.join(tags)}]", 'todo: "- [ ] in frontmatter"', "---"]
        if rng.random() < 0.3:
            out += ["Before any heading.", "", self.task(""), ""]
        for _ in range(rng.randint(1, 3)):
            out += [f"{'#' * rng.randint(1, 2)} {rng.choice(HEADINGS)}", ""]
            level = -1  # the first item of a block is not indented (four spaces would be code)
            for _ in range(rng.randint(0, 5)):
                level = 0 if level < 0 else rng.choice([0, level, min(level + 1, 2)])
                if level and rng.random() < 0.15:
                    out.append("    " * level + "- a plain item")
                    level += 1
                out.append(self.task("    " * level))
            out.append("")
            if rng.random() < 0.2:
                out += ["```", self.task(""), "```", ""]
            if rng.random() < 0.15:
                out += ["%%", self.task(""), "%%", ""]
        return out


def generate(
    root: Path, seed: int, settings: bool = False, notes: int = 40, rollover: bool = True
) -> list[str]:
    """Write the vault; returns its note paths (sorted). Without `rollover`, the dates that
    are no calendar date are only those no parser rolls over to the next month (2024-13-01)."""
    rng = random.Random(seed)
    writer = _Writer(rng, settings, rollover)
    paths: list[str] = []
    for i in range(notes):
        folder = rng.choice(FOLDERS)
        rel = f"{folder}/Note {i:02d}.md" if folder else f"Note {i:02d}.md"
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(writer.note()) + "\n", encoding="utf-8")
        paths.append(rel)
    if settings:
        config = root / ".obsidian" / "plugins" / "obsidian-tasks-plugin" / "data.json"
        config.parent.mkdir(parents=True)
        config.write_text(json.dumps(SETTINGS), encoding="utf-8")
    return sorted(paths)


# ------------------------------------------------------------------------------ the oracle
_TASK = re.compile(r"^( *)- \[(.)\] (.*)$")
_ITEM = re.compile(r"^( *)- ")
_FIELD = re.compile(
    r" (?:(🔺|⏫|🔼|🔽|⏬)|\[priority:: (\w+)\]|🔁 (every (?:2 weeks|day|week))|\[repeat:: ([^\]]+)\]"
    r"|(📅|⏳|🛫|➕|✅|❌) (\S+)|\[(due|scheduled|start|created|completion|cancelled):: ([^\]]+)\]"
    r"|🆔 (\S+)|\[id:: ([^\]]+)\]|⛔ (\S+)|\[dependsOn:: ([^\]]+)\])(?= |$)"
)
_KINDS = {v: k for k, v in EMOJI.items()} | {v: k for k, v in DATAVIEW.items()}


@dataclass
class Task:
    path: str
    line: int
    status: str
    type: str
    description: str
    tags: list[str]
    note_tags: list[str]
    heading: list[str]
    parent: int | None
    dates: dict[str, str] = field(default_factory=dict)
    priority: str = "none"
    recurrence: str | None = None
    id: str | None = None
    depends_on: list[str] = field(default_factory=list)

    def day(self, kind: str) -> dt.date | None:
        """The valid date of a field, or None (absent or invalid)."""
        try:
            return dt.date.fromisoformat(self.dates[kind]) if kind in self.dates else None
        except ValueError:
            return None

    @property
    def open(self) -> bool:
        return self.type in ("TODO", "IN_PROGRESS", "ON_HOLD")


def _fields(task: Task, text: str) -> str:
    """Fill the task's fields from `text`; the text before the first one (the description)."""
    first = len(text)
    for m in _FIELD.finditer(text):
        first = min(first, m.start())
        g = m.groups()
        if g[0] or g[1]:
            task.priority = PRIORITY.get(g[0] or "", g[1] or "none")
        elif g[2] or g[3]:
            task.recurrence = g[2] or g[3]
        elif g[4]:
            task.dates[_KINDS[g[4]]] = g[5]
        elif g[6]:
            task.dates[_KINDS[g[6]]] = g[7]
        elif g[8] or g[9]:
            task.id = g[8] or g[9]
        else:
            task.depends_on = [g[10] or g[11]]
    return text[:first]


def read_note(path: str, text: str, settings: bool) -> list[Task]:
    lines = text.split("\n")
    note_tags: list[str] = []
    start = 0
    if lines and lines[0] == "---":
        end = lines.index("---", 1)
        note_tags = [t.strip() for t in lines[1].split("[", 1)[1].rstrip("]").split(",") if t.strip()]
        start = end + 1
    heading: list[tuple[int, str]] = []
    items: list[tuple[int, int, bool]] = []  # (level, line, is a task)
    fenced = comment = False
    out: list[Task] = []
    for k in range(start, len(lines)):
        line = lines[k]
        if line == "```" or line == "%%":
            fenced, comment = (not fenced, comment) if line == "```" else (fenced, not comment)
            continue
        if fenced or comment:
            continue
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            heading = [h for h in heading if h[0] < level] + [(level, line[level + 1 :])]
            items = []
            continue
        m, item = _TASK.match(line), _ITEM.match(line)
        if item is None:
            continue
        level = len(item.group(1)) // 4
        items = [i for i in items if i[0] < level]
        parents = [i for i in items if i[2]]
        is_task = m is not None and (not settings or GLOBAL_FILTER in m.group(3))
        if is_task and m is not None:
            status = m.group(2)
            task = Task(path, k + 1, status, (CUSTOM_TYPES if settings else DEFAULT_TYPES).get(status, "TODO"),
                        "", [], note_tags, [h[1] for h in heading], parents[-1][1] if parents else None)  # fmt: skip
            task.description = _fields(task, m.group(3))
            task.tags = [w[1:] for w in task.description.split() if w.startswith("#") and w != GLOBAL_FILTER]
            out.append(task)
        items.append((level, k + 1, m is not None))  # parent: the nearest checkbox item, filtered or not
    return out


class Oracle:
    """vault_tasks' answers in plain Python over the files (module doc)."""

    def __init__(self, root: Path, paths: list[str], settings: bool) -> None:
        self.settings = settings
        self.tasks = [
            t for p in paths for t in read_note(p, (root / p).read_text(encoding="utf-8"), settings)
        ]

    def _blocked(self, task: Task) -> bool:
        open_ids = {t.id for t in self.tasks if t.open and t.id}
        return task.open and any(d in open_ids for d in task.depends_on)

    def _tag(self, task: Task, wanted: str) -> bool:
        w = wanted.lower().lstrip("#")
        return any(t.lower() == w or t.lower().startswith(w + "/") for t in task.tags + task.note_tags)

    def _status(self, task: Task, entries: list[str]) -> bool:
        for e in entries:
            if len(e) == 1 and task.status == e:
                return True
            word = e.lower()
            if (
                (word == "open" and task.open)
                or (word == "closed" and not task.open)
                or word == task.type.lower()
            ):
                return True
        return False

    def _date(self, task: Task, kind: str, phrase: str) -> bool:
        if phrase == "none":
            return kind not in task.dates
        if phrase == "any":
            return kind in task.dates
        if phrase == "invalid":
            return kind in task.dates and task.day(kind) is None
        day = task.day(kind)
        relation, lo, hi = DATE_PHRASES[phrase]
        if day is None:
            return kind == "start" and kind not in task.dates  # a task without a start date can start
        return {"before": day < lo, "after": day > hi, "on": lo <= day <= hi}[relation]

    def matches(self, task: Task, f: dict[str, Any]) -> bool:  # noqa: C901 - one line per filter
        checks = [
            not f.get("status") or self._status(task, f["status"]),
            all(self._date(task, k, f[k]) for k in ("due", "scheduled", "start", "done") if k in f),
            not f.get("priority") or task.priority in f["priority"],
            all(self._tag(task, t) for t in f.get("tags", [])),
            "folder" not in f or task.path.startswith(f["folder"] + "/"),
            "text" not in f
            or f["text"].lower() in task.description.replace(GLOBAL_FILTER, "", 1).strip().lower()
            if self.settings
            else "text" not in f or f["text"].lower() in task.description.lower(),
            "heading" not in f or f["heading"].lower() in (task.heading[-1].lower() if task.heading else ""),
            "recurring" not in f or (task.recurrence is not None) == f["recurring"],
            "blocked" not in f or self._blocked(task) == f["blocked"],
        ]
        if "overdue" in f:
            due = task.day("due")
            checks.append((task.open and due is not None and due < TODAY) == f["overdue"])
        return all(checks)

    def select(self, f: dict[str, Any]) -> list[Task]:
        found = [t for t in self.tasks if self.matches(t, f)]
        sort = [s.strip() for s in f.get("sort", "").split(",") if s.strip()]

        def cmp(a: Task, b: Task) -> int:
            return _compare(a, b, sort)

        return sorted(found, key=functools.cmp_to_key(cmp))


DATE_PHRASES: dict[str, tuple[str, dt.date, dt.date]] = {
    "before today": ("before", TODAY, TODAY),
    "after today": ("after", TODAY, TODAY),
    "today": ("on", TODAY, TODAY),
    "on tomorrow": ("on", TODAY + dt.timedelta(days=1), TODAY + dt.timedelta(days=1)),
    "before 2024-06-01": ("before", dt.date(2024, 6, 1), dt.date(2024, 6, 1)),
    "2024-06-10 2024-06-20": ("on", dt.date(2024, 6, 10), dt.date(2024, 6, 20)),
    "in next week": ("on", dt.date(2024, 6, 17), dt.date(2024, 6, 23)),
    "after last month": ("after", dt.date(2024, 5, 1), dt.date(2024, 5, 31)),
}
_TYPE_RANK = {"IN_PROGRESS": 1, "TODO": 2, "ON_HOLD": 3, "DONE": 4, "CANCELLED": 5, "NON_TASK": 6}


def urgency(t: Task) -> float:
    score = 0.0
    due = t.day("due")
    if due is not None:
        overdue = (TODAY - due).days
        score += 12.0 * (
            1.0 if overdue >= 7 else ((overdue + 14) * 0.8) / 21 + 0.2 if overdue >= -14 else 0.2
        )
    scheduled, start = t.day("scheduled"), t.day("start")
    if scheduled is not None and scheduled <= TODAY:
        score += 5.0
    if start is not None and start > TODAY:
        score -= 3.0
    return (
        score
        + 6.0
        * {"highest": 1.5, "high": 1.0, "medium": 0.65, "none": 0.325, "low": 0.0, "lowest": -0.3}[t.priority]
    )


def _date_cmp(a: Task, b: Task, kind: str) -> int:
    """Dated first (an invalid date before a valid one), absent last."""

    def key(t: Task) -> tuple[int, dt.date]:
        if kind not in t.dates:
            return (2, dt.date.min)
        day = t.day(kind)
        return (0, dt.date.min) if day is None else (1, day)

    ka, kb = key(a), key(b)
    return (ka > kb) - (ka < kb)


def _one(a: Task, b: Task, key: str) -> int:
    if key in ("due", "scheduled", "start", "created", "done"):
        return _date_cmp(a, b, key)
    if key == "priority":
        return PRIORITIES.index(a.priority) - PRIORITIES.index(b.priority)
    if key == "status":
        return (not a.open) - (not b.open)
    if key == "status.type":
        return _TYPE_RANK[a.type] - _TYPE_RANK[b.type]
    if key == "urgency":
        return (urgency(b) > urgency(a)) - (urgency(b) < urgency(a))
    ka, kb = natural_key(a.path), natural_key(b.path)
    return (ka > kb) - (ka < kb)


def _compare(a: Task, b: Task, sort: list[str]) -> int:
    for raw in [*sort, "status.type", "urgency", "due", "priority", "path"]:
        c = _one(a, b, raw.lstrip("-"))
        if c:
            return -c if raw.startswith("-") else c
    return a.line - b.line
