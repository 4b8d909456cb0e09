"""Tasks queries and ```tasks blocks over a real snapshot (indexer → Parquet → reader):
whole payloads as goldens, blocks by index and by heading, placeholders, NOTE_CHANGED."""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import testkit
from query.snapfactory import SnapFactory

from vault_agent.config import Settings
from vault_agent.errors import Ambiguous, InvalidQuery, NotFound
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.tasks.lang_api import QueryRequest, run_tasks_query

TODAY = dt.date(2023, 4, 19)
GOLDEN = Path(__file__).parent / "golden"

FILES = {
    "Dashboard.md": (
        "# Dashboard\n\n## Today\n\n```tasks\nnot done\ndue before tomorrow\nsort by due\n```\n\n"
        "## This folder\n\n> [!todo] Here\n> ```tasks\n> not done\n> path includes {{query.file.folder}}\n"
        "> group by heading\n> ```\n\n## Broken\n\n```tasks\nfilter by function task.isDone\n```\n"
    ),
    "Daily/2023-04-18.md": (
        "# Errands\n\n- [ ] buy milk #shop 📅 2023-04-18\n- [x] pay rent ✅ 2023-04-18 📅 2023-04-17\n"
        "- [ ] call the bank ⏫ 📅 2023-12-32\n\n```md\n- [ ] not a task 📅 2023-04-18\n```\n"
    ),
    "Daily/2023-04-19.md": "# Work\n\n- [/] write report #work 🆔 rep1\n    - [ ] send report ⛔ rep1 📅 2023-04-21\n",
    "Inbox.md": "- [ ] triage inbox 🔁 every day ⏳ 2023-04-19\n- [ ] waiting for Bob [due:: 2023-04-26]\n",
}


@pytest.fixture
def reader(
    snap: Callable[[dict[str, str | bytes]], tuple[Settings, SnapFactory]],
    make_reader: Callable[..., SnapshotReader],
) -> SnapshotReader:
    settings, _ = snap(dict(FILES))
    return make_reader(settings)


CLOCK = functools.partial(dt.datetime.combine, TODAY, dt.time(9), dt.UTC)


def _run(reader: SnapshotReader, query: str | None = None, block: str | None = None, **kw: Any) -> Any:
    out = run_tasks_query(reader, QueryRequest(query=query, block=block, **kw), clock=CLOCK)
    return {"data": out.data.model_dump(by_alias=True), "warnings": [w.model_dump() for w in out.warnings]}


def _golden(name: str, payload: Any) -> None:
    testkit.check_golden(
        GOLDEN / name, json.dumps(payload, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    )


def test_query_payload(reader: SnapshotReader) -> None:
    _golden("query_not_done.json", _run(reader, "not done\nlimit 3"))


def test_block_by_index_and_heading(reader: SnapshotReader) -> None:
    first = _run(reader, block="Dashboard#1")
    assert first == _run(reader, block="Dashboard#Today") == _run(reader, block="[[Dashboard#today]]")
    _golden("block_today.json", first)
    assert [t["line"] for t in first["data"]["results"]] == [3]  # an invalid due date is never "before"


def test_block_placeholders_take_its_note(reader: SnapshotReader) -> None:
    grouped = _run(reader, block="Dashboard.md#2")
    _golden("block_folder_grouped.json", grouped)
    assert grouped["data"]["block"] == {
        "path": "Dashboard.md",
        "index": 2,
        "line": 14,
        "heading": "This folder",
    }
    # the block's note is in the root: `path includes /` keeps the notes in folders
    assert [g["names"] for g in grouped["data"]["groups"]] == [["Errands"], ["Work"]]


def test_refused_block_names_its_line(reader: SnapshotReader) -> None:
    with pytest.raises(InvalidQuery, match=r"^tasks query: line 1: `filter by function`"):
        run_tasks_query(reader, QueryRequest(block="Dashboard#Broken"), clock=CLOCK)


def test_block_addresses_that_miss(reader: SnapshotReader) -> None:
    with pytest.raises(NotFound, match="3 ```tasks block"):
        run_tasks_query(reader, QueryRequest(block="Dashboard#4"), clock=CLOCK)
    with pytest.raises(Ambiguous, match="Dashboard.md#1, Dashboard.md#2"):
        run_tasks_query(reader, QueryRequest(block="Dashboard"), clock=CLOCK)
    with pytest.raises(NotFound, match="no ```tasks block"):
        run_tasks_query(reader, QueryRequest(block="Inbox"), clock=CLOCK)
    with pytest.raises(NotFound):
        run_tasks_query(reader, QueryRequest(block="No such note#1"), clock=CLOCK)


def test_note_changed_since_the_snapshot(reader: SnapshotReader) -> None:
    path = Path(reader.vault.root) / "Dashboard.md"
    path.write_text(
        FILES["Dashboard.md"].replace("due before tomorrow", "due after 2023-04-20"), encoding="utf-8"
    )
    out = _run(reader, block="Dashboard.md#1")
    assert [w["code"] for w in out["warnings"]] == ["NOTE_CHANGED"]
    # the file's query, the snapshot's tasks
    assert [(t["path"], t["line"]) for t in out["data"]["results"]] == [
        ("Daily/2023-04-19.md", 4),
        ("Inbox.md", 2),
    ]


def test_paging(reader: SnapshotReader) -> None:
    pages, cursor = [], None
    for _ in range(5):
        page = _run(reader, "not done", limit=2, cursor=cursor)["data"]
        pages.append(page)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [len(p["results"]) for p in pages] == [2, 2, 2]
    assert pages[0]["total"] == pages[0]["matched"] == 6
    grouped = [_run(reader, "not done\ngroup by heading", limit=4)["data"]]
    grouped.append(
        _run(reader, "not done\ngroup by heading", limit=4, cursor=grouped[0]["next_cursor"])["data"]
    )
    names = [[g["names"][0] for g in p["groups"]] for p in grouped]
    assert names == [["(No heading)", "Errands"], ["Work"]]
    assert grouped[1]["next_cursor"] is None
