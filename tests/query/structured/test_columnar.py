"""The in-memory answer (columnar.py) and the SQL one are the same answer, byte for byte,
on the fixture vault and on a snapshot with tombstoned rows; and columnar.py does answer
the plans it is meant for (else these tests would compare SQL with itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from query.structured.kit import copy_fixture, opened, query

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.query.structured import columnar


def W(field: str, op: str, value: Any = None) -> dict[str, Any]:
    return {"field": field, "op": op, "value": value}


CASES: list[dict[str, Any]] = [
    {"tags": ["projects"]},
    {"tags": ["book"], "sort": "-rating", "select": ["rating", "genre"]},
    {"any_tags": ["games", "book"], "sort": "title"},
    {"where": [W("rating", ">=", 8)], "select": ["rating"]},
    {"where": [W("status", "!=", "open"), W("pages", ">", 100)], "sort": "-pages"},
    {"where": [W("time-read", "<", "2021-05-01")], "sort": "time-read"},
    {"where": [W("date", "=", "2024-05-15")]},
    {"where": [W("completed", "=", True)], "sort": "-mtime"},
    {"where": [W("reviewer", "missing")], "sort": "-size", "limit": 7},
    {"where": [W("genre", "in", ["scifi", "fantasy"])], "sort": "-genre", "select": ["genre", "follow-ups"]},
    {"where": [W("priority", ">", 1)], "sort": "ctime"},
    {"sort": "-priority", "select": ["priority", "date"], "limit": 500},
    {"sort": "date", "limit": 500, "select": ["follow-ups", "time-read"]},
    {"dql": "TABLE rating, genre FROM #book WHERE rating > 3 SORT rating DESC"},
    {"dql": "LIST WHERE !completed SORT file.mtime DESC LIMIT 5"},
]


def _both(ctx: Any, monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> tuple[str, str]:
    fast = query(ctx, **params)
    with monkeypatch.context() as m:
        m.setattr(columnar, "columns_of", lambda *_a, **_k: None)
        slow = query(ctx, **params)
    return fast.model_dump_json(), slow.model_dump_json()


@pytest.mark.parametrize("params", CASES, ids=[str(i) for i in range(len(CASES))])
def test_memory_and_sql_answer_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]
) -> None:
    with opened(copy_fixture(tmp_path)) as ctx:
        fast, slow = _both(ctx, monkeypatch, params)
        assert fast == slow


def test_the_common_plans_are_answered_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answered: list[bool] = []
    ordered = columnar.ordered

    def counted(*args: Any) -> Any:
        answered.append(True)
        return ordered(*args)

    monkeypatch.setattr(columnar, "ordered", counted)
    with opened(copy_fixture(tmp_path)) as ctx:
        for params in CASES[:13]:
            query(ctx, **params)
    assert len(answered) == 13


def test_tombstoned_rows_are_gone_in_memory_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(30):
        (vault / f"{i:02d}.md").write_text(
            f"---\nstatus: draft\npriority: {i % 5}\ntags: [old]\n---\n# {i}\n"
        )
    settings = Settings(vault=vault, index_dir=tmp_path / "state")
    build_index(settings, full=True)
    (vault / "03.md").write_text("---\nstatus: done\npriority: 9\n---\n# 3 #new/one\n")
    (vault / "04.md").unlink()
    build_index(settings)
    with opened(settings) as ctx:
        for params in ({"tags": ["old"], "limit": 500}, {"sort": "-priority", "select": ["priority", "status"]},
                       {"where": [W("priority", ">=", 4)]}, {"tags": ["new"], "select": ["status"]}):  # fmt: skip
            fast, slow = _both(ctx, monkeypatch, params)
            assert fast == slow
        assert '"03.md"' in _both(ctx, monkeypatch, {"tags": ["new"]})[0]


def test_a_plan_sql_answers_builds_no_columns(tmp_path: Path) -> None:
    with opened(copy_fixture(tmp_path)) as ctx:
        assert query(ctx, folder="Books").data.total
        assert not columnar._caches.of(ctx.reader).snapshots
        query(ctx, tags=["book"])
        assert len(columnar._caches.of(ctx.reader).snapshots) == 1
