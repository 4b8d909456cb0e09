"""The Tasks query parser: the plugin's own boolean test table, its line-continuation rules,
every refused construct by name, and properties (never crashes, render → re-read)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.errors import InvalidQuery
from vault_agent.query.tasks.lang_ast import (
    BoolOp,
    DateInvalid,
    DateIs,
    DatePresent,
    Done,
    Filter,
    Flag,
    GroupKey,
    Not,
    PriorityIs,
    Regex,
    SortKey,
    StatusTypeIs,
    Substring,
    TextMatch,
)
from vault_agent.query.tasks.lang_filters import parse_filter
from vault_agent.query.tasks.lang_lines import QueryFile, continued_lines
from vault_agent.query.tasks.lang_parse import parse_query
from vault_agent.task_dates import DateRange, DateSearch

TODAY = dt.date(2023, 4, 19)
DATA = Path(__file__).parent / "data"


def one(text: str) -> Filter:
    return parse_filter(text, "line 1", TODAY)


def d(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


# ---------------------------------------------------------------- the plugin's boolean table


def _shape(node: Filter) -> Any:
    """The plugin's Explanation tree of a node: AND/OR chains folded left as
    Explanation.combineOrCreateExplanation does; leaves rendered."""
    if isinstance(node, Not):
        return ["NOT", _shape(node.child)]
    if isinstance(node, BoolOp):
        left, right = _shape(node.left), _shape(node.right)
        if (
            node.op in ("AND", "OR")
            and isinstance(left, list)
            and left[0] == node.op
            and not isinstance(right, list)
        ):
            return [*left, right]
        return [node.op, left, right]
    return node.render()


def _expected(tree: Any) -> Any:
    if isinstance(tree, str):
        return one(tree).render()
    return [tree[0], *(_expected(t) for t in tree[1:])]


def _leaves(tree: Any) -> list[str]:
    return [tree] if isinstance(tree, str) else [x for t in tree[1:] for x in _leaves(t)]


PLUGIN_CASES = json.loads((DATA / "plugin_boolean_cases.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", PLUGIN_CASES, ids=[c["input"][:60] for c in PLUGIN_CASES])
def test_plugin_boolean_table(case: dict[str, Any]) -> None:
    text = case["input"]
    if "error" in case:
        with pytest.raises(InvalidQuery):
            parse_query(text, TODAY)
        return
    if any(leaf.lower().startswith("filter by function") for leaf in _leaves(case["tree"])):
        with pytest.raises(InvalidQuery, match="JavaScript"):
            parse_query(text, TODAY)
        return
    query = parse_query(text, TODAY)
    assert len(query.filters) == 1
    assert _shape(query.filters[0].filter) == _expected(case["tree"])


def test_plugin_table_is_all_there() -> None:
    assert len(PLUGIN_CASES) == 217
    assert sum("error" in c for c in PLUGIN_CASES) == 25


def test_precedence_not_xor_and_or() -> None:
    a, b, c = (TextMatch("tag", Substring(f"#{x}"), False) for x in "abc")
    q = "(tag includes #a) OR (tag includes #b) AND (tag includes #c)"
    assert one(q) == BoolOp("OR", a, BoolOp("AND", b, c))
    q = "(tag includes #a) AND (tag includes #b) XOR (tag includes #c)"
    assert one(q) == BoolOp("AND", a, BoolOp("XOR", b, c))
    q = "NOT (tag includes #a) XOR (tag includes #b)"
    assert one(q) == BoolOp("XOR", Not(a), b)
    q = "(tag includes #a) OR NOT (tag includes #b)"
    assert one(q) == BoolOp("OR", a, Not(b))
    with pytest.raises(InvalidQuery):  # as in the plugin, XOR NOT is no operator
        one("(tag includes #a) XOR NOT (tag includes #b)")


# ---------------------------------------------------------------- lines (Scanner.test.ts)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("line1 \\\ncontinued", ["line1 continued"]),
        ("description includes 2 hello   \\\n   world   ", ["description includes 2 hello world"]),
        ("description includes 5 hello    \\\\\ndescription includes 6 world",
         ["description includes 5 hello    \\", "description includes 6 world"]),
        ("description includes 9 hello world\\\ndescription includes 10 hello world\\\\",
         ["description includes 9 hello world description includes 10 hello world\\"]),
        ("due today\\", ["due today"]),
        ("not done\n\n   \ndue this week  ", ["not done", "due this week"]),
        ("( property1 ) AND \\\n\t(property2)", ["( property1 ) AND (property2)"]),
    ],
)  # fmt: skip
def test_continuations(text: str, expected: list[str]) -> None:
    assert [s.text for s in continued_lines(text)] == expected


def test_statements_keep_their_line_numbers() -> None:
    got = continued_lines("not done\n\n(a) OR \\\n  (b) OR \\\n  (c)\nsort by due")
    assert [(s.first_line, s.last_line) for s in got] == [(1, 1), (3, 5), (6, 6)]
    assert got[1].where() == "lines 3-5"


# ---------------------------------------------------------------- instructions


@pytest.mark.parametrize(
    ("text", "node"),
    [
        ("done", Done(True)),
        ("NOT DONE", Done(False)),
        ("status.type is in_progress", StatusTypeIs("IN_PROGRESS", False)),
        ("status.type is not NON_TASK", StatusTypeIs("NON_TASK", True)),
        ("due before tomorrow", DateIs("due", DateSearch("before", DateRange(d("2023-04-20"), d("2023-04-20"))))),
        ("starts after next week", DateIs("start", DateSearch("after", DateRange(d("2023-04-24"), d("2023-04-30"))))),
        ("happens in 2023-W16", DateIs("happens", DateSearch("on", DateRange(d("2023-04-17"), d("2023-04-23"))))),
        ("done on or before 2023-01-31", DateIs("done", DateSearch("on or before", DateRange(d("2023-01-31"), d("2023-01-31"))))),
        ("cancelled yesterday", DateIs("cancelled", DateSearch("on", DateRange(d("2023-04-18"), d("2023-04-18"))))),
        ("created in or after last month", DateIs("created", DateSearch("on or after", DateRange(d("2023-03-01"), d("2023-03-31"))))),
        ("has scheduled date", DatePresent("scheduled", True)),
        ("no happens date", DatePresent("happens", False)),
        ("start date is invalid", DateInvalid("start")),
        ("priority is above none", PriorityIs("above", "none")),
        ("priority medium", PriorityIs("is", "medium")),
        ("priority is not lowest", PriorityIs("not", "lowest")),
        ("is recurring", Flag("recurring", True)),
        ("is not blocked", Flag("blocked", False)),
        ("is blocking", Flag("blocking", True)),
        ("exclude sub-items", Flag("top_level", True)),
        ("no tags", Flag("tags", False)),
        ("has depends on", Flag("depends_on", True)),
        ("path includes Projects/", TextMatch("path", Substring("Projects/"), False)),
        ("heading does not include Log", TextMatch("heading", Substring("Log"), True)),
        ("tags do not include #todo", TextMatch("tag", Substring("#todo"), True)),
        ("tag includes home", TextMatch("tag", Substring("home"), False)),
        ("status.name includes unknown", TextMatch("status.name", Substring("unknown"), False)),
        ('description includes "Day Planner"', TextMatch("description", Substring('"Day Planner"'), False)),
        ("filename regex matches /^2023/", TextMatch("filename", Regex("^2023", "", "^2023"), False)),
        ("tag regex matches /#book$/i", TextMatch("tag", Regex("#book$", "i", "(?i)#book$"), False)),
        ("recurrence includes every week", TextMatch("recurrence", Substring("every week"), False)),
        ("root does not include Archive", TextMatch("root", Substring("Archive"), True)),
    ],
)  # fmt: skip
def test_instructions(text: str, node: Filter) -> None:
    assert one(text) == node


def test_sorts_groups_limits_and_display_lines() -> None:
    q = parse_query(
        "not done\nsort by status.type\nsort by due reverse\nsort by tag 2\nsort by urgency\n"
        "group by priority reverse\ngroup by tags\nlimit to 50 tasks\nlimit groups 3\n"
        "# a comment\nhide backlinks\nshow tree\nshort mode\nfull\nexplain\nignore global query\nview list",
        TODAY,
    )
    assert q.sorts == [
        SortKey("status.type"),
        SortKey("due", True),
        SortKey("tag", False, 2),
        SortKey("urgency"),
    ]
    assert q.groups == [GroupKey("priority", True), GroupKey("tags")]
    assert (q.limit, q.group_limit, q.explain, q.ignore_global_query, q.display_only) == (
        50,
        3,
        True,
        True,
        5,
    )


def test_view_columns_is_the_first_group() -> None:
    q = parse_query("group by due\nview columns by priority reverse", TODAY)
    assert q.groups == [GroupKey("priority", True), GroupKey("due")]


def test_placeholders_and_presets_take_the_block_note() -> None:
    note = QueryFile("Work/Projects/Plan.md")
    q = parse_query(
        "path includes {{query.file.path}}\nfolder includes {{ query.file.folder }}\n"
        "root includes {{query.file.root}}\nfilename includes {{query.file.filenameWithoutExtension}}{{! comment }}\n"
        "preset this_folder",
        TODAY,
        note,
    )
    assert [f.filter.render() for f in q.filters] == [
        "path includes Work/Projects/Plan.md",
        "folder includes Work/Projects/",
        "root includes Work/",
        "filename includes Plan",
        "folder includes Work/Projects/",
    ]
    assert QueryFile("Top.md").values()["query.file.folder"] == "/"
    assert QueryFile("Top.md").values()["query.file.root"] == "/"


# Every construct refused, with the words its message names (never the query text itself).
REFUSED = [
    ("filter by function task.isDone", "line 1", "JavaScript"),
    ("not done\nsort by function task.urgency", "line 2", "JavaScript"),
    ("group by function task.due.format('YYYY')", "line 1", "JavaScript"),
    ("view columns by function task.due", "line 1", "JavaScript"),
    ("(done) OR (filter by function task.isDone)", "line 1", "JavaScript"),
    ("preset this_folder_only", "line 1", "JavaScript"),
    ("preset overdue_tasks", "line 1", "preset"),
    ("group by {{query.file.property('level_1_group')}}", "line 1", "placeholder"),
    ("path includes {{query.file.path}}", "line 1", "block"),
    ("due before the deadline", "line 1", "date"),
    ("due 2023-02-30", "line 1", "date"),
    ("due before <% tp.date.now() %>", "line 1", "template"),
    ("status.type is WAITING", "line 1", "status.type"),
    ("priority is urgent", "line 1", "not an instruction"),
    ("sort by due date", "line 1", "sort by"),
    ("sort by colour", "line 1", "sort by"),
    ("group by colour", "line 1", "group by"),
    ("hide sidebar", "line 1", "hide"),
    ("view board", "line 1", "view"),
    ("urgency above 5", "line 1", "not an instruction"),
    ("backlink includes x", "line 1", "not an instruction"),
    ("description regex matches /(a)\\1/", "line 1", "backreference"),
    ("description regex matches /(?<!a)b/", "line 1", "lookaround"),
    ("description regex matches /a/y", "line 1", "flag"),
    ("description regex matches a", "line 1", "/pattern/"),
    ("description regex matches /a{1001}/", "line 1", "RE2"),
    ('"not done" AND (is recurring)', "line 1", "delimiter"),
    ("(not done) AND", "line 1", "boolean"),
    ("(not done)) OR ((done)", "line 1", "boolean"),
    ("(not done) and (done)", "line 1", "not an instruction"),
    ("limit 99999999999", "line 1", "limit"),
    ("not done\n\nfrobnicate the tasks", "line 3", "not an instruction"),
]


@pytest.mark.parametrize(("text", "where", "named"), REFUSED, ids=[r[0][:40] for r in REFUSED])
def test_refused_constructs_are_named(text: str, where: str, named: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        parse_query(text, TODAY)
    message = err.value.message
    assert message.startswith(f"tasks query: {where}: ")
    assert named in message
    for word in ("frobnicate", "deadline", "overdue_tasks", "task.isDone", "colour", "sidebar"):
        assert word not in message  # the query's own words are never echoed


def test_deep_nesting_is_refused_not_a_crash() -> None:
    text = "(" * 300 + "done" + ")" * 300
    with pytest.raises(InvalidQuery, match="deep"):
        parse_query(text, TODAY)


def test_too_long_or_too_many_lines() -> None:
    with pytest.raises(InvalidQuery, match="longer"):
        parse_query("not done\n" * 3000, TODAY)
    with pytest.raises(InvalidQuery, match="lines"):
        parse_query("\n" * 600, TODAY)


# ---------------------------------------------------------------- properties

INSTRUCTION_WORDS = [
    "not", "done", "due", "before", "after", "on", "in", "or", "today", "next", "week", "2023-01-01",
    "AND", "OR", "NOT", "XOR", "(", ")", "[", "]", '"', "{", "}", "path", "includes", "regex", "matches",
    "/a+/i", "tag", "tags", "include", "priority", "is", "above", "high", "sort", "by", "group", "limit",
    "5", "reverse", "#x", "\\", "\n", "{{query.file.path}}", "has", "date", "status.type", "TODO", "#",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_crashes_on_any_text(text: str) -> None:
    with contextlib.suppress(InvalidQuery):
        parse_query(text, TODAY, QueryFile("a/b.md"))


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(INSTRUCTION_WORDS), max_size=14))
def test_parser_never_crashes_on_word_soup(words: list[str]) -> None:
    with contextlib.suppress(InvalidQuery):
        parse_query(" ".join(words), TODAY, QueryFile("a/b.md"))


LEAVES = [
    "done", "not done", "due before 2023-01-05", "has start date", "tag includes #x",
    "path does not include a/b", "priority is above none", "is recurring", "description regex matches /x+$/i",
    "happens in 2023-01-01 2023-01-31", "status.type is IN_PROGRESS", "scheduled date is invalid",
]  # fmt: skip


def _bool(parts: tuple[Any, Filter, Filter]) -> Filter:
    return BoolOp(parts[0], parts[1], parts[2])


nodes = st.recursive(
    st.sampled_from(LEAVES).map(one),
    lambda kids: st.one_of(
        kids.map(Not), st.tuples(st.sampled_from(["AND", "OR", "XOR"]), kids, kids).map(_bool)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(nodes)
def test_render_then_reread_is_the_same_tree(node: Filter) -> None:
    assert one(node.render()) == node
