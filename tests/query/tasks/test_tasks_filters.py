"""vault_tasks against an independent evaluation over a generated vault's files (taskvault.py):
what the index holds per task, every filter, sorts and the default order, pages through
next_cursor; fixed cases, then random combinations (hypothesis). Two vaults: the plugin's
defaults, and a settings file with a global filter and custom statuses."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query.tasks.taskvault import DATE_PHRASES, FOLDERS, HEADINGS, TAGS, TODAY, Oracle, Task, generate

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.tasks.filters import TaskFilters
from vault_agent.query.tasks.run import TasksRequest, vault_tasks
from vault_agent.task_model import TaskRow

World = tuple[SnapshotReader, Oracle]


def _clock() -> dt.datetime:
    return dt.datetime.combine(TODAY, dt.time(12), tzinfo=dt.UTC)


def _world(root: Path, with_settings: bool) -> Iterator[World]:
    paths = generate(root / "vault", seed=11 if with_settings else 5, settings=with_settings)
    cfg = Settings(vault=root / "vault", index_dir=root / "state")
    build_index(cfg, full=True)
    reader = SnapshotReader(cfg, vault_for_settings(cfg), freshness=lambda _m: "fresh")
    try:
        yield reader, Oracle(root / "vault", paths, with_settings)
    finally:
        reader.close()


@pytest.fixture(scope="module", params=[False, True], ids=["defaults", "settings"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from _world(tmp_path_factory.mktemp("tasks"), request.param)


def _filters(f: dict[str, Any]) -> TaskFilters:
    lists = {k: tuple(v) for k, v in f.items() if isinstance(v, list)}
    return TaskFilters(**{**f, **lists})


def pages(reader: SnapshotReader, f: dict[str, Any], limit: int = 7) -> tuple[list[TaskRow], int]:
    """Every task of every page, following next_cursor; and the first page's total."""
    out: list[TaskRow] = []
    cursor: str | None = None
    total = -1
    for _ in range(1000):
        answer = vault_tasks(reader, TasksRequest(_filters(f), limit, cursor), _clock)
        assert [w.code for w in answer.warnings if w.code != "RESULTS_TRUNCATED"] == []
        total = answer.data.total if total < 0 else total
        out += answer.data.results
        cursor = answer.data.next_cursor
        if cursor is None:
            return out, total
    raise AssertionError("paging did not end")


def _key(t: TaskRow | Task) -> tuple[str, int]:
    return (t.path, t.line)


def check(world: World, f: dict[str, Any]) -> list[TaskRow]:
    reader, oracle = world
    expected = oracle.select(f)
    got, total = pages(reader, f)
    assert [_key(t) for t in got] == [_key(t) for t in expected], f
    assert total == len(expected)
    return got


def test_every_task_as_the_files_say(world: World) -> None:
    reader, oracle = world
    got, _ = pages(reader, {}, limit=500)
    by_key = {_key(t): t for t in oracle.tasks}
    assert sorted(_key(t) for t in got) == sorted(by_key)
    assert len(got) > 60  # the vault holds tasks of every kind
    for row in got:
        t = by_key[_key(row)]
        assert (row.status, row.status_type, row.heading_path, row.parent_line) == (
            t.status, t.type, t.heading, t.parent,
        ), row  # fmt: skip
        dates = {
            k: getattr(row, k) for k in ("due", "scheduled", "start", "created", "done") if getattr(row, k)
        }
        assert dates == t.dates
        assert row.invalid_dates == [
            k for k in ("due", "scheduled", "start", "created", "done") if k in t.dates and t.day(k) is None
        ]
        assert (row.priority or "none", row.recurrence, row.id, row.depends_on) == (
            t.priority, t.recurrence, t.id, t.depends_on,
        )  # fmt: skip
        assert row.tags == t.tags and row.note_tags == t.note_tags
        assert row.description.strip() == t.description.strip()


CASES: list[dict[str, Any]] = [
    {},
    {"status": ["open"]},
    {"status": ["closed"]},
    {"status": ["todo", "in_progress"]},
    {"status": ["x", "X"]},
    {"status": ["?"]},
    {"status": ["on_hold"]},
    {"status": ["non_task", "cancelled"]},
    {"due": "before today"},
    {"due": "none"},
    {"due": "any"},
    {"due": "invalid"},
    {"due": "2024-06-10 2024-06-20"},
    {"scheduled": "in next week"},
    {"start": "before today"},
    {"done": "after last month"},
    {"overdue": True},
    {"overdue": False},
    {"priority": ["high", "highest"]},
    {"priority": ["none"]},
    {"tags": ["work"]},
    {"tags": ["#WORK/urgent"]},
    {"tags": ["work", "home"]},
    {"folder": "projects"},
    {"text": "BANK"},
    {"heading": "work"},
    {"recurring": True},
    {"recurring": False},
    {"blocked": True},
    {"blocked": False},
    {"status": ["open"], "due": "before today", "sort": "due"},
    {"sort": "-priority,due"},
    {"sort": "path"},
    {"sort": "status"},
    {"sort": "urgency"},
    {"sort": "-scheduled"},
]


@pytest.mark.parametrize("f", CASES, ids=[str(c) for c in CASES])
def test_filters_and_sorts(world: World, f: dict[str, Any]) -> None:
    check(world, f)


_FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "status": st.lists(
            st.sampled_from(["open", "closed", "todo", "done", "x", " ", "/", "?", "on_hold"]),
            min_size=1,
            max_size=3,
        ),
        "due": st.sampled_from(sorted(DATE_PHRASES) + ["none", "any", "invalid"]),
        "scheduled": st.sampled_from(sorted(DATE_PHRASES) + ["none", "any"]),
        "start": st.sampled_from(["before today", "after today", "none"]),
        "overdue": st.booleans(),
        "priority": st.lists(
            st.sampled_from(["highest", "high", "medium", "none", "low", "lowest"]), min_size=1, max_size=2
        ),
        "tags": st.lists(st.sampled_from(TAGS), min_size=1, max_size=2),
        "folder": st.sampled_from([f for f in FOLDERS if f]),
        "text": st.sampled_from(["bank", "e", "2 box", "garden"]),
        "heading": st.sampled_from([h.lower() for h in HEADINGS]),
        "recurring": st.booleans(),
        "blocked": st.booleans(),
        "sort": st.sampled_from(["due", "-due", "priority,path", "-urgency", "status,-start", "created"]),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(f=_FILTERS, limit=st.integers(1, 40))
def test_random_filters_and_pages(world: World, f: dict[str, Any], limit: int) -> None:
    reader, oracle = world
    expected = oracle.select(f)
    got, total = pages(reader, f, limit=limit)
    assert [_key(t) for t in got] == [_key(t) for t in expected], f
    assert total == len(expected)
