"""vault_tasks and DQL TASK on fixtures/tasks, answers checked by hand (the note's lines are
numbered in the comments of docs/tasks.md's examples): the Tasks plugin's documented
instructions (`not done`, `due before today`, `is recurring`, `is blocked`, `priority is
above medium`, custom statuses, invalid dates) and Dataview's TASK examples."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_agent.config import Settings
from vault_agent.errors import InvalidQuery
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.filters import Filters
from vault_agent.query.structured.run import QueryRequest, vault_query
from vault_agent.query.tasks.filters import TaskFilters
from vault_agent.query.tasks.run import TasksRequest, vault_tasks

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "tasks"
NOW = dt.datetime(2024, 5, 15, 9, 0, tzinfo=dt.UTC)  # a Wednesday
D, G, R, N = "Daily/2024-05-14.md", "Projects/Garden.md", "Projects/Report.md", "Inbox.md"  # N: the iNbox


def clock() -> dt.datetime:
    return NOW


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SnapshotReader]:
    root = tmp_path_factory.mktemp("fixture")
    shutil.copytree(FIXTURE, root / "vault")
    settings = Settings(vault=root / "vault", index_dir=root / "state")
    build_index(settings, full=True)
    r = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    yield r
    r.close()


def tasks(reader: SnapshotReader, **filters: Any) -> list[tuple[str, int]]:
    lists = {k: tuple(v) for k, v in filters.items() if isinstance(v, list)}
    answer = vault_tasks(reader, TasksRequest(TaskFilters(**{**filters, **lists}), limit=100), clock)
    assert answer.data.total == len(answer.data.results)
    return [(t.path, t.line) for t in answer.data.results]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"status": ["open"], "due": "before today", "sort": "due"}, [(D, 7), (D, 5)]),
        ({"overdue": True}, [(D, 7), (D, 5)]),
        ({"due": "today"}, [(G, 13)]),
        ({"due": "invalid"}, [(D, 8)]),
        ({"recurring": True}, [(G, 13)]),
        ({"blocked": True}, [(R, 8)]),
        # urgency: the bank 17.1 (5 days overdue, high), seeds 12.5 (due in 5 days, high), passport 9 (highest)
        ({"priority": ["above medium"]}, [(D, 7), (G, 9), (D, 8)]),
        ({"status": ["on_hold", "non_task"], "sort": "path"}, [(N, 5), (G, 14)]),
        ({"status": ["?"]}, [(N, 4)]),
        ({"text": "SHED", "sort": "path"}, [(N, 5), (G, 14)]),
        ({"heading": "spring"}, None),
        ({"done": "before 2024-05-01"}, [(D, 6)]),
        ({"scheduled": "2024-05-12"}, [(G, 10)]),
        ({"tags": ["local"]}, [(G, 12)]),
    ],
)
def test_examples(
    reader: SnapshotReader, filters: dict[str, Any], expected: list[tuple[str, int]] | None
) -> None:
    got = tasks(reader, **filters)
    if expected is None:  # membership only: the order is the plugin's default (urgency first)
        assert sorted(got) == [(G, 9), (G, 10), (G, 12), (G, 13), (G, 14)]
    else:
        assert got == expected


def test_tags_of_the_task_and_of_its_note(reader: SnapshotReader) -> None:
    assert sorted(tasks(reader, tags=["project"])) == [(G, 9), (G, 10), (G, 12), (G, 13), (G, 14),
                                                       (R, 6), (R, 7), (R, 8), (R, 9)]  # fmt: skip
    assert sorted(tasks(reader, tags=["#WORK"])) == [(N, 6), (R, 6), (R, 7), (R, 8), (R, 9)]
    assert sorted(tasks(reader, folder="Projects")) == sorted(tasks(reader, tags=["project"]))


def test_code_and_comments_hold_no_task_and_nesting_looks_through_plain_items(reader: SnapshotReader) -> None:
    everything = vault_tasks(reader, TasksRequest(TaskFilters(sort="path"), limit=100), clock).data
    assert everything.total == 18  # Daily 4, Garden 5, Report 4, Inbox 5
    assert (everything.counts.open, everything.counts.overdue) == (13, 2)
    rows = {(t.path, t.line): t for t in everything.results}
    assert sorted(line for path, line in rows if path == G) == [9, 10, 12, 13, 14]
    assert (rows[(G, 10)].parent_line, rows[(G, 12)].parent_line, rows[(G, 9)].parent_line) == (9, 9, None)
    assert rows[(G, 12)].heading_path == ["Garden", "Spring"]
    assert (rows[(G, 12)].tags, rows[(G, 12)].note_tags) == (["local"], ["project/garden"])
    passport = rows[(D, 8)]
    assert (passport.due, passport.invalid_dates, passport.priority) == ("2023-12-32", ["due"], "highest")
    assert (rows[(G, 14)].status_type, rows[(G, 14)].status_name) == ("ON_HOLD", "Deferred")
    assert (rows[(N, 4)].status_type, rows[(N, 4)].status_name) == ("TODO", "Unknown")
    assert rows[(G, 9)].notation == "dataview" and rows[(D, 5)].notation == "emoji"


def dql(reader: SnapshotReader, text: str) -> list[tuple[str, int]]:
    answer = vault_query(reader, QueryRequest(filters=Filters(), dql=text, limit=100), clock=clock)
    return [(r.path, r.properties["line"] + 1) for r in answer.data.results]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TASK WHERE !completed AND due < date(today) SORT due", [(D, 7), (D, 5)]),
        (
            "TASK FROM #project WHERE !completed SORT due ASC",
            [(G, 13), (G, 12), (R, 7), (G, 9), (R, 8), (G, 10), (G, 14), (R, 9)],
        ),
        ('TASK WHERE completion = date("2024-04-30")', [(D, 6)]),
        ('TASK WHERE contains(tags, "#local")', [(G, 12)]),
        ('TASK WHERE status = "?"', [(N, 4)]),
        (
            'TASK FROM "Projects" WHERE due AND due >= date(today) - dur(1 day) SORT due DESC LIMIT 2',
            [(R, 8), (G, 9)],
        ),
        ("TASK WHERE completed", [(D, 6), (N, 7), (R, 6)]),
    ],
)
def test_dql_task_examples(reader: SnapshotReader, text: str, expected: list[tuple[str, int]]) -> None:
    assert dql(reader, text) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("TASK WHERE fullyCompleted", "'fullycompleted'"),
        ("TASK FROM [[Inbox]]", "a link source"),
        ("TASK WHERE rating > 3", "'rating'"),
        ("TASK SORT line", "SORT by line"),
    ],
)
def test_dql_task_refuses_by_name(reader: SnapshotReader, text: str, named: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        dql(reader, text)
    assert named in err.value.message
