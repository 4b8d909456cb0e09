"""Running Tasks queries over task rows: the plugin's documented examples with hand-checked
answers on a small synthetic vault, and the columnar evaluation against the independent
plain-Python one (oracle.py) on random rows and queries."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from query.tasks.oracle import groups as oracle_groups
from query.tasks.oracle import run as oracle_run

from vault_agent.query.tasks.lang_columns import build_columns
from vault_agent.query.tasks.lang_parse import parse_query
from vault_agent.query.tasks.lang_run import run_query
from vault_agent.task_settings import TaskSettings
from vault_agent.task_syntax import DATE_FIELDS, parse_task_line

TODAY = dt.date(2023, 4, 19)  # a Wednesday
SCHEMA = pa.schema(
    [
        ("path", pa.string()), ("line", pa.int32()), ("parent_line", pa.int32()), ("status", pa.string()),
        ("description", pa.string()), ("tags", pa.list_(pa.string())), ("heading_path", pa.list_(pa.string())),
        ("due", pa.string()), ("scheduled", pa.string()), ("start", pa.string()), ("created", pa.string()),
        ("done", pa.string()), ("cancelled", pa.string()), ("priority", pa.int8()), ("recurrence", pa.string()),
        ("id", pa.string()), ("depends_on", pa.list_(pa.string())), ("on_completion", pa.string()),
        ("notation", pa.string()),
    ]
)  # fmt: skip


def row(
    path: str, line: int, text: str, heading: list[str] | None = None, parent: int | None = None
) -> dict[str, Any]:
    """The index's row for one task line (task_syntax reads the line)."""
    task = parse_task_line(text)
    assert task is not None, text
    out: dict[str, Any] = {
        "path": path, "line": line, "parent_line": parent, "status": task.status,
        "description": task.description, "tags": list(task.tags), "heading_path": heading or [],
    }  # fmt: skip
    for kind in DATE_FIELDS:
        out[kind] = task.values.get(kind)
    out.update(
        priority=task.priority, recurrence=task.values.get("recurrence"), id=task.values.get("id"),
        depends_on=list(task.depends_on), on_completion=None, notation=task.notation,
    )  # fmt: skip
    return out


# A small vault, as the index would hold it (path, line order).
VAULT = [
    row("Daily/2023-04-18.md", 3, "- [ ] buy milk #shop 📅 2023-04-18", ["Errands"]),
    row("Daily/2023-04-18.md", 4, "- [x] pay rent ✅ 2023-04-18 📅 2023-04-17", ["Errands"]),
    row("Daily/2023-04-18.md", 5, "- [ ] call the bank ⏫ 📅 2023-12-32", ["Errands"]),
    row("Daily/2023-04-19.md", 2, "- [/] write report #work 🆔 rep1 🔼", ["Work"]),
    row("Daily/2023-04-19.md", 3, "- [ ] send report #work ⛔ rep1 📅 2023-04-21", ["Work"], parent=2),
    row("Daily/2023-04-19.md", 7, "- [-] old plan #work ❌ 2023-04-10"),
    row("Inbox.md", 1, "- [ ] triage inbox #inbox 🔁 every day ⏳ 2023-04-19"),
    row("Inbox.md", 2, "- [ ] waiting for Bob [due:: 2023-04-26] [priority:: low]", ["Waiting"]),
    row("Projects/Garden/Plan.md", 10, "- [ ] plant seeds #garden/spring 🛫 2023-05-01 📅 2023-05-10", ["Plan", "Spring"]),
    row("Projects/Garden/Plan.md", 11, "- [ ] buy compost #garden #shop 🔺 ➕ 2023-04-01", ["Plan", "Spring"]),
    row("Projects/Garden/Plan.md", 20, "- [x] sketch beds ✅ 2023-03-30", ["Plan"]),
    row("Projects/House.md", 5, "- [ ] fix door ⏬ 📅 2023-04-19 🔁 every week", ["Repairs"]),
]  # fmt: skip


def table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


COLS = build_columns(table(VAULT), TaskSettings())


def run(text: str) -> list[str]:
    result = run_query(parse_query(text, TODAY), COLS, TODAY)
    return [f"{COLS.table.column('path')[int(k)]}:{COLS.table.column('line')[int(k)]}" for k in result.rows]


# Hand-checked: each answer below was worked out from the plugin's docs for this vault.
CASES = [
    ("not done\ndue today", ["Projects/House.md:5"]),
    ("not done\ndue before today", ["Daily/2023-04-18.md:3"]),
    ("due date is invalid", ["Daily/2023-04-18.md:5"]),
    # DONE before CANCELLED; within DONE, the overdue one is more urgent
    ("done", ["Daily/2023-04-18.md:4", "Projects/Garden/Plan.md:20", "Daily/2023-04-19.md:7"]),
    ("status.type is CANCELLED", ["Daily/2023-04-19.md:7"]),
    ("status.type is IN_PROGRESS", ["Daily/2023-04-19.md:2"]),
    ("is blocked", ["Daily/2023-04-19.md:3"]),
    ("is blocking", ["Daily/2023-04-19.md:2"]),
    ("is recurring\nsort by path", ["Inbox.md:1", "Projects/House.md:5"]),
    ("priority is above none\nnot done\nsort by priority",
     ["Projects/Garden/Plan.md:11", "Daily/2023-04-18.md:5", "Daily/2023-04-19.md:2"]),
    ("priority is below none\nsort by path", ["Inbox.md:2", "Projects/House.md:5"]),
    ("tags include #shop\nsort by path", ["Daily/2023-04-18.md:3", "Projects/Garden/Plan.md:11"]),
    ("tag includes garden\nsort by description", ["Projects/Garden/Plan.md:11", "Projects/Garden/Plan.md:10"]),
    ("tag regex matches /#garden$/", ["Projects/Garden/Plan.md:11"]),
    ("no tags\nnot done\nsort by path", ["Daily/2023-04-18.md:5", "Inbox.md:2", "Projects/House.md:5"]),
    ("starts before tomorrow\nnot done\nsort by path",  # no start date matches too
     ["Daily/2023-04-18.md:3", "Daily/2023-04-18.md:5", "Daily/2023-04-19.md:2", "Daily/2023-04-19.md:3",
      "Inbox.md:1", "Inbox.md:2", "Projects/Garden/Plan.md:11", "Projects/House.md:5"]),
    ("( (starts before tomorrow) AND (has start date) )", []),
    ("happens next month", ["Projects/Garden/Plan.md:10"]),
    ("scheduled on or before today", ["Inbox.md:1"]),
    ("created in 2023-04", ["Projects/Garden/Plan.md:11"]),
    ("done in last month", ["Projects/Garden/Plan.md:20"]),
    ("cancelled last week", ["Daily/2023-04-19.md:7"]),
    ("due this week\nsort by due", ["Daily/2023-04-18.md:4", "Daily/2023-04-18.md:3", "Projects/House.md:5", "Daily/2023-04-19.md:3"]),
    ("path includes garden", ["Projects/Garden/Plan.md:11", "Projects/Garden/Plan.md:10", "Projects/Garden/Plan.md:20"]),
    # same path: the default order decides (highest priority 9.0 beats a later start 1.35)
    ("folder includes Projects/\nnot done\nsort by path\nlimit 2", ["Projects/Garden/Plan.md:11", "Projects/Garden/Plan.md:10"]),
    ("root includes Daily\nheading includes work", ["Daily/2023-04-19.md:2", "Daily/2023-04-19.md:3"]),
    ("heading does not include a\nsort by path",  # Work, Spring and no heading; Errands, Plan… hold an a
     ["Daily/2023-04-19.md:2", "Daily/2023-04-19.md:3", "Daily/2023-04-19.md:7", "Inbox.md:1",
      "Projects/Garden/Plan.md:11", "Projects/Garden/Plan.md:10"]),
    ("filename includes plan\nnot done\nsort by description", ["Projects/Garden/Plan.md:11", "Projects/Garden/Plan.md:10"]),
    ("description regex matches /^(buy|call)/\nsort by description",
     ["Projects/Garden/Plan.md:11", "Daily/2023-04-18.md:3", "Daily/2023-04-18.md:5"]),
    ("(path includes inbox) XOR (description includes #inbox)", ["Inbox.md:2"]),
    ("not done\n(tags include #work) OR \\\n  (priority is high)",
     ["Daily/2023-04-19.md:2", "Daily/2023-04-19.md:3", "Daily/2023-04-18.md:5"]),  # due in 2 days (9.84) > invalid (6.0)
    ("exclude sub-items\nroot includes Daily\nnot done", ["Daily/2023-04-19.md:2", "Daily/2023-04-18.md:3", "Daily/2023-04-18.md:5"]),
    ("recurrence includes week", ["Projects/House.md:5"]),
    ("has id", ["Daily/2023-04-19.md:2"]),
    ("has depends on", ["Daily/2023-04-19.md:3"]),
    ("status.name includes progress", ["Daily/2023-04-19.md:2"]),
]  # fmt: skip


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_documented_examples(query: str, expected: list[str]) -> None:
    assert run(query) == expected


def test_default_order_is_status_type_then_urgency() -> None:
    # IN_PROGRESS first, then TODO by urgency (src/Task/Urgency.ts, worked by hand)
    assert run("not done") == [
        "Daily/2023-04-19.md:2",  # in progress
        "Daily/2023-04-18.md:3",  # due yesterday: 0.7714 * 12 + 1.95 = 11.21
        "Daily/2023-04-19.md:3",  # due in 2 days: 0.6571 * 12 + 1.95 = 9.84
        "Projects/Garden/Plan.md:11",  # highest priority, no date: 9.0
        "Projects/House.md:5",  # due today, lowest priority: 8.8 - 1.8 = 7.0
        "Inbox.md:1",  # scheduled today: 5 + 1.95 = 6.95
        "Daily/2023-04-18.md:5",  # invalid due date (ignored), high priority: 6.0
        "Inbox.md:2",  # due in a week, low priority: 0.4667 * 12 = 5.6
        "Projects/Garden/Plan.md:10",  # due in 3 weeks, starts later: 2.4 - 3 + 1.95 = 1.35
    ]


def test_limit_counts_matches_before_the_limit() -> None:
    result = run_query(parse_query("not done\nlimit 2", TODAY), COLS, TODAY)
    assert (len(result.rows), result.matched) == (2, 9)


def test_groups_in_the_plugin_order() -> None:
    result = run_query(
        parse_query("not done\ngroup by due\nsort by path\nlimit groups 1", TODAY), COLS, TODAY
    )
    assert result.groups is not None
    got = [(g.names, len(g.rows), g.total) for g in result.groups]
    assert got == [
        (("Invalid due date",), 1, 1),
        (("2023-04-18 Tuesday",), 1, 1),
        (("2023-04-19 Wednesday",), 1, 1),
        (("2023-04-21 Friday",), 1, 1),
        (("2023-04-26 Wednesday",), 1, 1),
        (("2023-05-10 Wednesday",), 1, 1),
        (("No due date",), 1, 3),
    ]
    result = run_query(parse_query("group by priority\ngroup by tags reverse\nnot done", TODAY), COLS, TODAY)
    assert result.groups is not None
    assert [g.names for g in result.groups][:4] == [
        ("Highest priority", "#shop"),
        ("Highest priority", "#garden"),
        ("High priority", "(No tags)"),
        ("Medium priority", "#work"),
    ]


# ---------------------------------------------------------------- against the oracle

LINES = [
    "- [ ] a #x 📅 2023-04-18", "- [x] b #y ✅ 2023-04-01", "- [ ] c ⏫ 📅 2023-12-32", "- [/] d #x/y 🆔 i1",
    "- [ ] e ⛔ i1 📅 2023-04-25", "- [-] f ❌ 2023-04-10", "- [ ] g 🔁 every day ⏳ 2023-04-19",
    "- [ ] h [due:: 2023-04-26] [priority:: low]", "- [ ] i #z 🛫 2023-05-01 📅 2023-05-10",
    "- [ ] j #x #y 🔺 ➕ 2023-04-01", "- [x] k ✅ 2023-03-30", "- [ ] l ⏬ 📅 2023-04-19", "- [?] m",
    "- [ ] n 🛫 2023-99-01", "- [ ] o ⏳ 2023-04-20 🔽",
]  # fmt: skip
PATHS = ["A.md", "b/C.md", "b/c/D.md", "E 10.md", "E 9.md"]
INSTRUCTIONS = [
    "done", "not done", "due before today", "due after 2023-04-20", "due this week", "has due date",
    "no due date", "due date is invalid", "starts before tomorrow", "happens next week", "has happens date",
    "scheduled on or after today", "done in last month", "priority is above none", "priority is not low",
    "is recurring", "is not recurring", "is blocked", "is not blocking", "tags include #x", "no tags",
    "tag regex matches /y$/", "path includes c", "folder includes b/", "root does not include b",
    "heading includes 2", "description includes a", "status.type is TODO", "status.name includes done",
    "exclude sub-items", "(done) OR (due before today)", "NOT (has tags)", "(is recurring) XOR (has due date)",
]  # fmt: skip
SORTS = ["sort by due", "sort by priority reverse", "sort by path", "sort by tag", "sort by status",
         "sort by urgency", "sort by description reverse", "sort by happens", "sort by heading",
         "sort by filename", "sort by recurring", "sort by done reverse"]  # fmt: skip

rows_strategy = st.lists(
    st.tuples(st.sampled_from(LINES), st.sampled_from(PATHS), st.integers(1, 3), st.booleans()),
    max_size=25,
)


def _vault(drawn: list[tuple[str, str, int, bool]]) -> list[dict[str, Any]]:
    rows = []
    for k, (text, path, heading, nested) in enumerate(drawn):
        rows.append(row(path, k + 1, text, [f"H{heading}"], parent=1 if nested and k else None))
    return sorted(rows, key=lambda r: (r["path"], r["line"]))


@settings(max_examples=300, deadline=None)
@given(
    rows_strategy,
    st.lists(st.sampled_from(INSTRUCTIONS), max_size=3),
    st.lists(st.sampled_from(SORTS), max_size=2),
    st.one_of(st.none(), st.integers(0, 10)),
)
def test_columns_agree_with_the_oracle(
    drawn: list[tuple[str, str, int, bool]], filters: list[str], sorts: list[str], limit: int | None
) -> None:
    rows = _vault(drawn)
    text = "\n".join([*filters, *sorts, *([f"limit {limit}"] if limit is not None else [])])
    query = parse_query(text, TODAY)
    cols = build_columns(table(rows), TaskSettings())
    got = run_query(query, cols, TODAY)
    expected, matched = oracle_run(query, rows, TODAY)
    assert [(r["path"], r["line"]) for r in expected] == [
        (rows[int(k)]["path"], rows[int(k)]["line"]) for k in got.rows
    ]
    assert got.matched == matched


@settings(max_examples=150, deadline=None)
@given(
    rows_strategy,
    st.lists(
        st.sampled_from(["tags", "status", "priority", "heading", "due"]), min_size=1, max_size=2, unique=True
    ),
)
def test_group_membership_agrees_with_the_oracle(
    drawn: list[tuple[str, str, int, bool]], fields: list[str]
) -> None:
    rows = _vault(drawn)
    query = parse_query("\n".join(f"group by {f}" for f in fields), TODAY)
    cols = build_columns(table(rows), TaskSettings())
    got = run_query(query, cols, TODAY)
    ordered, _ = oracle_run(query, rows, TODAY)
    expected = {
        names: [(r["path"], r["line"]) for r in members] for names, members in oracle_groups(fields, ordered)
    }
    assert got.groups is not None
    assert {
        g.names: [(rows[int(k)]["path"], rows[int(k)]["line"]) for k in g.rows] for g in got.groups
    } == expected
