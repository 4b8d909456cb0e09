"""vault_query's filters against an independent evaluation over the generated vault's files.

`vaultgen.Oracle` reads the files (PyYAML, line scans) and applies docs/query.md's rules in
plain Python; every answer is compared page by page (through next_cursor) with the
snapshot's, for tags, every property predicate and type, dates, folders, links, sort and
paging, and for random combinations (hypothesis).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query.structured.kit import all_pages, index_vault, opened
from query.structured.vaultgen import STATUSES, TAGS, Oracle, generate

from vault_agent.api.operation import AppContext


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppContext, Oracle]]:
    root = Path(tmp_path_factory.mktemp("gen"))
    files = generate(root / "vault", seed=7)
    settings = index_vault(root / "vault", root / "state")
    with opened(settings) as ctx:
        yield ctx, Oracle(root / "vault", sorted(files))


def check(world: tuple[AppContext, Oracle], filters: dict[str, Any], page: int = 7) -> list[str]:
    ctx, oracle = world
    expected = [n.path for n in oracle.select(filters)]
    got, total = all_pages(ctx, page, **filters)
    assert got == expected, filters
    assert total == len(expected)
    return got


CASES: list[dict[str, Any]] = [
    {},
    {"tags": ["project"]},
    {"tags": ["#Project/alpha"]},
    {"tags": ["project", "meeting"]},
    {"tags": ["area"]},
    {"tags": ["area/home"]},
    {"tags": ["INBOX"]},
    {"tags": ["日本語"]},
    {"any_tags": ["meeting", "x-1"]},
    {"where": [{"field": "status", "op": "=", "value": "active"}]},
    {"where": [{"field": "Status", "op": "!=", "value": "active"}]},
    {"where": [{"field": "status", "op": "in", "value": ["done", "Active"]}]},
    {"where": [{"field": "priority", "op": ">", "value": 2}]},
    {"where": [{"field": "priority", "op": ">", "value": "2"}]},  # a client that sends text only
    {"where": [{"field": "priority", "op": "=", "value": " 3"}]},
    {"where": [{"field": "status", "op": "in", "value": "done, Active"}]},
    {"where": [{"field": "priority", "op": "<=", "value": 2.5}]},
    {"where": [{"field": "priority", "op": "=", "value": "3"}]},
    {"where": [{"field": "priority", "op": "=", "value": "high"}]},
    {"where": [{"field": "priority", "op": ">=", "value": "h"}]},
    {"where": [{"field": "priority", "op": "=", "value": None}]},
    {"where": [{"field": "priority", "op": "!=", "value": None}]},
    {"where": [{"field": "done", "op": "=", "value": True}]},
    {"where": [{"field": "done", "op": "!=", "value": True}]},
    {"where": [{"field": "done", "op": "=", "value": "true"}]},
    {"where": [{"field": "due", "op": "<", "value": "2024-03-01"}]},
    {"where": [{"field": "due", "op": ">=", "value": "2024-04-10T12:00:00"}]},
    {"where": [{"field": "due", "op": "=", "value": "2024-05-20"}]},
    {"where": [{"field": "due", "op": "=", "value": "2024-03-17"}]},
    {"where": [{"field": "rating", "op": ">", "value": 2.5}]},
    {"where": [{"field": "authors", "op": "contains", "value": "bob"}]},
    {"where": [{"field": "authors", "op": "contains", "value": "b"}]},
    {"where": [{"field": "status", "op": "contains", "value": "act"}]},
    {"where": [{"field": "reviewer", "op": "exists"}]},
    {"where": [{"field": "reviewer", "op": "missing"}]},
    {"where": [{"field": "labels", "op": "exists"}]},
    {"where": [{"field": "nosuchfield", "op": "=", "value": "x"}]},
    {"where": [{"field": "nosuchfield", "op": "missing"}]},
    {"folder": "projects"},
    {"folder": "projects/alpha/"},
    {"folder": "archive"},
    {"folder": "Archive"},
    {"modified_after": "2024-03-01"},
    {"modified_before": "2024-02-15T06:00:00"},
    {"modified_after": "2024-02-01", "modified_before": "2024-04-01"},
    {"links_to": "note-058"},
    {"links_to": "NOTE-020"},
    {"linked_from": "note-003"},
    {"sort": "-mtime"},
    {"sort": "mtime", "tags": ["project"]},
    {"sort": "priority"},
    {"sort": "-priority"},
    {"sort": "due"},
    {"sort": "-due"},
    {"sort": "-status"},
    {"sort": "done"},
    {"tags": ["project"], "where": [{"field": "status", "op": "=", "value": "Active"}], "folder": "projects"},
]


@pytest.mark.parametrize("filters", CASES, ids=[str(c)[:70] for c in CASES])
def test_filters_match_the_independent_evaluation(
    world: tuple[AppContext, Oracle], filters: dict[str, Any]
) -> None:
    check(world, filters)


def test_the_cases_are_not_trivial(world: tuple[AppContext, Oracle]) -> None:
    """Cases select some notes and leave some out (a filter that cannot fail proves little),
    but for the controls: substring is not list-item equality, a null is not a value, an
    unknown property matches nothing."""
    _, oracle = world
    controls = 5
    sizes = [len(oracle.select(c)) for c in CASES if "sort" not in c and c]
    assert sum(1 for n in sizes if 0 < n < len(oracle.notes)) == len(sizes) - controls


def test_case_twins_are_two_notes(world: tuple[AppContext, Oracle]) -> None:
    got = check(world, {"folder": "areas", "tags": ["inbox"]})
    assert {"areas/Todo.md", "areas/todo.md"} <= set(got)


def test_paging_size_does_not_change_the_answer(world: tuple[AppContext, Oracle]) -> None:
    filters = {"sort": "-priority", "tags": ["project"]}
    answers = {tuple(all_pages(world[0], size, **filters)[0]) for size in (1, 3, 50, 500)}
    assert len(answers) == 1


_where = st.fixed_dictionaries(
    {
        "field": st.sampled_from(
            ["status", "priority", "done", "due", "rating", "authors", "reviewer", "Status"]
        ),
        "op": st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "contains", "exists", "missing", "in"]),
        "value": st.one_of(
            st.sampled_from([*STATUSES, "high", "3", "ann", "2024-03-01", "2024-05-01T10:00:00", "true"]),
            st.integers(0, 5),
            st.sampled_from([1.5, 2.5, True, False, None]),
        ),
    }
)
_filters = st.fixed_dictionaries(
    {},
    optional={
        "tags": st.lists(st.sampled_from(TAGS + ["project", "area/home"]), max_size=2),
        "any_tags": st.lists(st.sampled_from(TAGS), max_size=3),
        "where": st.lists(_where, max_size=2),
        "folder": st.sampled_from(["projects", "areas", "archive", "projects/alpha"]),
        "modified_after": st.sampled_from(["2024-01-15", "2024-03-01", "2024-04-20T10:00:00"]),
        "links_to": st.sampled_from(["note-001", "note-030", "note-055"]),
        "sort": st.sampled_from(["path", "-mtime", "priority", "-priority", "due", "-rating", "-done"]),
    },
)


def _valid(filters: dict[str, Any]) -> dict[str, Any]:
    for cond in filters.get("where", []):
        if cond["op"] == "in":
            cond["value"] = [cond["value"], "done"]
    return filters


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_filters)
def test_random_filters_match_the_independent_evaluation(
    world: tuple[AppContext, Oracle], filters: dict[str, Any]
) -> None:
    check(world, _valid(filters), page=11)
