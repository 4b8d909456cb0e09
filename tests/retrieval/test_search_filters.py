"""`search` and `vault_search` with vault_query's filters (tags, folder, modified_after/before):
the filters narrow the candidates before ranking, so a note the filters keep is never lost
to the top-k cut of notes they drop."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from query.structured.kit import call, index_vault, iso_ns, opened

from vault_agent.api.operation import AppContext
from vault_agent.errors import IndexNotFound, InvalidPath, InvalidQuery

NEEDLES = [f"deep/needle-{k}.md" for k in range(3)]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    root = Path(tmp_path_factory.mktemp("sfilters"))
    vault = root / "vault"
    files: dict[str, str] = {}
    for i in range(60):  # notes that rank first for "harbor": it is their name and their text
        files[f"docs/harbor-{i:02d}.md"] = (
            f"---\ntags: [common]\n---\n# Harbor plan {i}\n\nharbor harbor harbor\n"
        )
    filler = " ".join(["lantern", "meadow", "orchard", "quarry", "ribbon"] * 40)
    for rel in NEEDLES:  # one mention, deep in a long text: ranked far below the others
        files[rel] = f"---\ntags: [Needle/Sharp]\n---\n# Notes\n\n{filler}\n\nA harbor once.\n\n{filler}\n"
    for rel, text in files.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        ns = iso_ns("2024-05-10T00:00:00Z" if rel in NEEDLES else "2024-01-01T00:00:00Z")
        os.utime(path, ns=(ns, ns))
    with opened(index_vault(vault, root / "state")) as context:
        yield context


def search(ctx: AppContext, **params: Any) -> list[str]:
    body = call(ctx, "search", {"query": "harbor", "limit": 3, "group": "note", **params})
    return [r["path"] for r in body["data"]["results"]]


def grep(ctx: AppContext, **params: Any) -> list[tuple[str, Any]]:
    body = call(ctx, "grep", {"query": "harbor", "line_numbers": True, **params})
    return [(r["path"], r["line"]) for r in body["data"]["results"]]


def test_unfiltered_search_ranks_the_needles_out_of_the_top(ctx: AppContext) -> None:
    assert set(search(ctx, limit=50)).isdisjoint(NEEDLES)


@pytest.mark.parametrize(
    "filters",
    [
        {"tags": ["needle"]},
        {"tags": ["#needle/sharp"]},
        {"folder": "deep"},
        {"modified_after": "2024-05-01"},
        {"modified_after": "2024-05-09T23:00:00", "modified_before": "2024-05-11", "folder": "deep/"},
    ],
)
def test_filters_narrow_before_ranking(ctx: AppContext, filters: dict[str, Any]) -> None:
    assert sorted(search(ctx, **filters)) == NEEDLES
    assert sorted(search(ctx, group="chunk", **filters)) == NEEDLES
    assert {p for p, _ in grep(ctx, **filters)} == set(NEEDLES)
    assert [p for p, _ in grep(ctx, limit=1, **filters)] == NEEDLES[:1]


def test_filters_that_exclude_everything_answer_nothing(ctx: AppContext) -> None:
    assert search(ctx, tags=["needle"], folder="docs") == []
    assert search(ctx, modified_before="2023-01-01") == []
    assert grep(ctx, tags=["nothing"]) == []
    assert len(search(ctx, tags=["common"], limit=50)) == 50  # a wide filter keeps the ranking


def test_bad_filters_are_refused(ctx: AppContext) -> None:
    with pytest.raises(InvalidQuery):
        search(ctx, modified_after="soon")
    with pytest.raises(InvalidQuery):
        grep(ctx, tags=[""])
    with pytest.raises(InvalidPath):
        search(ctx, folder="../x")


def test_grep_filters_need_a_snapshot(tmp_path: Path) -> None:
    from vault_agent.config import Settings
    from vault_agent.paths import vault_for_settings
    from vault_agent.query.grep import GrepRequest, vault_search
    from vault_agent.query.snapshot import SnapshotReader
    from vault_agent.query.structured.filters import SearchFilters

    (tmp_path / "a.md").write_text("harbor\n")
    settings = Settings(vault=tmp_path, index_dir=tmp_path / ".vault-agent")
    reader = SnapshotReader(settings, vault_for_settings(settings))
    try:
        assert vault_search(
            vault_for_settings(settings), reader, GrepRequest("harbor")
        ).data.results  # from disk
        with pytest.raises(IndexNotFound):
            filtered = GrepRequest("harbor", filters=SearchFilters(tags=("x",)))
            vault_search(vault_for_settings(settings), reader, filtered)
    finally:
        reader.close()
