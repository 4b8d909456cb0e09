"""A parsed Tasks query is a task plan (plan.plan_of_query): the per-segment engine
(evaluate.py, order.py) answers it as the independent plain-Python evaluation (oracle.py)
does, row for row and in the same order, on the generated vault of test_tasks_filters, with
the default Tasks settings and with a settings file (custom statuses, a global filter)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from query.tasks.oracle import run as oracle_run
from query.tasks.taskvault import TODAY, generate

from vault_agent.config import Settings
from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.tasks.lang_parse import parse_query
from vault_agent.query.tasks.plan import plan_of_query
from vault_agent.query.tasks.rows import task_rows
from vault_agent.query.tasks.run import select

QUERIES = [
    "not done",
    "done",
    "due before today\nsort by due",
    "not done\ndue before in two weeks\nsort by priority\nsort by due reverse",
    "(due after yesterday) OR (is recurring)\nsort by path",
    "happens in next week",
    "has scheduled date\nno start date",
    "due date is invalid",
    "priority is above medium\nsort by urgency reverse",
    "status.type is IN_PROGRESS",
    "is blocked",
    "is not blocking",
    "description includes bank",
    "path includes projects\nsort by description",
    "tags include #work",
    "heading includes home\nsort by status",
    "exclude sub-items\nlimit 7",
    "NOT (done) AND (has due date)\nsort by tag",
    "starts before today",
    "filename includes 0\nsort by filename reverse\nlimit 12",
]


@pytest.fixture(scope="module", params=[False, True], ids=["defaults", "settings"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SnapshotReader, pa.Table]]:
    root = tmp_path_factory.mktemp("plan")
    generate(root / "vault", seed=21, settings=request.param)
    cfg = Settings(vault=root / "vault", index_dir=root / "state")
    build_index(cfg, full=True)
    manifest = read_current_manifest(cfg.index_dir)
    assert manifest is not None
    files = [str(Path(cfg.index_dir) / SEGMENTS_DIR / s.files["tasks"]) for s in manifest.segments]
    relation = duckdb.sql(f"SELECT * FROM read_parquet({files}) ORDER BY path, line")
    assert relation is not None
    table = relation.to_arrow_table()
    reader = SnapshotReader(cfg, vault_for_settings(cfg), freshness=lambda _m: "fresh")
    try:
        yield reader, table
    finally:
        reader.close()


@pytest.mark.parametrize("text", QUERIES)
def test_a_tasks_query_runs_the_same_on_the_plan_engine(
    world: tuple[SnapshotReader, pa.Table], text: str
) -> None:
    reader, table = world
    query = parse_query(text, TODAY)
    with reader.acquire() as view:
        settings = view.manifest.task_settings
        ctx, selection = select(reader, view, plan_of_query(query), TODAY)
        limit = query.limit if query.limit is not None else len(selection)
        ours = [(t.path, t.line) for t in task_rows(selection.take(0, limit), ctx)]
    expected, matched = oracle_run(query, table.to_pylist(), TODAY, settings)
    assert ours == [(r["path"], r["line"]) for r in expected], text
    assert len(selection) == matched
    assert dt.date(2024, 6, 12) == TODAY
