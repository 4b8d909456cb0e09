"""Seed 000 orientation at the core-function level over real Parquet + DuckDB snapshots."""

from __future__ import annotations

import pytest

from vault_agent.errors import IndexIncompatible, IndexNotFound, InvalidParameter
from vault_agent.query import orientation as core

VAULT = {
    "index.md": "# Home\n",
    "areas/health/sleep.md": "---\ntags: [health, habit]\ntype: note\nstatus: active\n---\n# Sleep\n",
    "areas/health/food.md": "---\ntags: health\ntype: note\nstatus: [active, Active]\n---\n",
    "areas/work/plan.md": "---\ntags: '#work, planning'\ntype: project\nstatus: 3\ndate: 2024-01-02\n---\n",
    "areas/work/deep/deeper/x.md": "---\ntitle: X\nstatus: ''\ntype: null\n---\nbody\n",
    "journal/2024/01.md": "---\ntags: [journal]\ntype: log\nstatus: true\n---\ntext\n",
    "journal/2024/02.md": "---\ntags: [journal, habit]\ntype: [log, note]\n---\ntext\n",
    "zeta/a.md": "no frontmatter\n",
    "node_modules/pkg/readme.md": "# excluded\n",
    "attachments/image.png": "not a note",
}


def _body(outcome) -> dict:
    return {
        "data": outcome.data.model_dump(mode="json", by_alias=True),
        "warnings": [w.model_dump() for w in outcome.warnings],
    }


def test_overview_whole_result(snap, make_reader) -> None:
    settings, _ = snap(VAULT)
    out = core.overview(make_reader(settings))
    assert _body(out) == {
        "data": {
            "noteCount": 8,
            "chunkCount": 6,
            "topLevelFolders": [
                {"path": "areas", "noteCount": 4},
                {"path": "journal", "noteCount": 2},
                {"path": "zeta", "noteCount": 1},
            ],
            "topTags": [
                {"tag": "habit", "noteCount": 2},
                {"tag": "health", "noteCount": 2},
                {"tag": "journal", "noteCount": 2},
                {"tag": "planning", "noteCount": 1},
                {"tag": "work", "noteCount": 1},
            ],
            "frontmatterFields": [
                {"name": "type", "noteCount": 6},
                {"name": "status", "noteCount": 5},
                {"name": "tags", "noteCount": 5},
                {"name": "date", "noteCount": 1},
                {"name": "title", "noteCount": 1},
            ],
            "indexFreshness": "fresh",
        },
        "warnings": [],
    }
    assert out.freshness == "fresh"


def test_tree_default_and_childfolders(snap, make_reader) -> None:
    settings, _ = snap(VAULT)
    out = core.tree(make_reader(settings))
    assert _body(out) == {
        "data": {
            "root": {
                "path": "",
                "noteCount": 8,
                "childFolders": 3,
                "children": [
                    {
                        "path": "areas",
                        "noteCount": 4,
                        "childFolders": 2,
                        "children": [
                            {"path": "areas/health", "noteCount": 2, "childFolders": 0, "children": []},
                            {"path": "areas/work", "noteCount": 2, "childFolders": 1, "children": []},
                        ],
                    },
                    {
                        "path": "journal",
                        "noteCount": 2,
                        "childFolders": 1,
                        "children": [
                            {"path": "journal/2024", "noteCount": 2, "childFolders": 0, "children": []}
                        ],
                    },
                    {"path": "zeta", "noteCount": 1, "childFolders": 0, "children": []},
                ],
            },
            "indexFreshness": "fresh",
        },
        "warnings": [],
    }


def test_tree_direct_only_and_depth(snap, make_reader) -> None:
    settings, _ = snap(VAULT)
    out = core.tree(make_reader(settings), depth=10, limit=500, direct_only=True)
    root = out.data.model_dump(by_alias=True)["root"]
    assert root["noteCount"] == 1  # index.md only
    work = root["children"][0]["children"][1]
    assert work == {
        "path": "areas/work",
        "noteCount": 1,
        "childFolders": 1,
        "children": [
            {
                "path": "areas/work/deep",
                "noteCount": 0,
                "childFolders": 1,
                "children": [
                    {"path": "areas/work/deep/deeper", "noteCount": 1, "childFolders": 0, "children": []}
                ],
            }
        ],
    }
    assert out.warnings == []


def test_tree_limit_breadth_first(snap, make_reader) -> None:
    settings, _ = snap(VAULT)
    out = core.tree(make_reader(settings), depth=3, limit=4)
    body = _body(out)
    # root + the three top-level folders: breadth-first fills level 1 before level 2.
    assert body["data"]["root"]["children"] == [
        {"path": "areas", "noteCount": 4, "childFolders": 2, "children": []},
        {"path": "journal", "noteCount": 2, "childFolders": 1, "children": []},
        {"path": "zeta", "noteCount": 1, "childFolders": 0, "children": []},
    ]
    assert [w["code"] for w in body["warnings"]] == ["TREE_LIMIT_EXCEEDED"]
    one = core.tree(make_reader(settings), limit=1)
    assert one.data.root.children == [] and one.data.root.child_folders == 3
    assert [w.code for w in one.warnings] == ["TREE_LIMIT_EXCEEDED"]
    exact = core.tree(make_reader(settings), depth=2, limit=7)
    assert exact.warnings == []  # 7 nodes within depth 2 fit exactly


def test_tags_limit_and_ties(snap, make_reader) -> None:
    settings, _ = snap(VAULT)
    out = core.tags(make_reader(settings), limit=2)
    assert _body(out)["data"]["tags"] == [
        {"tag": "habit", "noteCount": 2},
        {"tag": "health", "noteCount": 2},
    ]
    assert [w.code for w in out.warnings] == ["TAGS_TRUNCATED"]
    assert core.tags(make_reader(settings), limit=200).warnings == []


def test_facets_values_only_for_allowlist(snap, make_reader) -> None:
    settings, _ = snap(VAULT)
    out = core.facets(make_reader(settings))
    assert _body(out)["data"]["fields"] == [
        {
            "name": "type",
            "noteCount": 6,
            "values": [
                {"value": "note", "noteCount": 3},
                {"value": "log", "noteCount": 2},
                {"value": "project", "noteCount": 1},
            ],
        },
        {
            "name": "status",
            "noteCount": 5,
            "values": [
                {"value": "active", "noteCount": 2},
                {"value": "3", "noteCount": 1},
                {"value": "Active", "noteCount": 1},
                {"value": "true", "noteCount": 1},
            ],
        },
        {"name": "tags", "noteCount": 5},
        {"name": "date", "noteCount": 1},
        {"name": "title", "noteCount": 1},
    ]
    assert out.warnings == []
    cut = core.facets(make_reader(settings), limit=1)
    assert [f.name for f in cut.data.fields] == ["type"]
    assert [w.code for w in cut.warnings] == ["FACETS_TRUNCATED"]


def test_overview_truncation_warnings(snap, make_reader) -> None:
    files: dict[str, str | bytes] = {}
    for i in range(22):
        fields = "".join(f"f{i}_{k}: 1\n" for k in range(3))
        files[f"d{i:02d}/n.md"] = f"---\ntags: [t{i}a, t{i}b, t{i}c]\n{fields}---\n"
    settings, _ = snap(files)
    out = core.overview(make_reader(settings, "stale"))
    data = out.data.model_dump(by_alias=True)
    assert len(data["topLevelFolders"]) == 20 and data["topLevelFolders"][0] == {
        "path": "d00",
        "noteCount": 1,
    }
    assert len(data["topTags"]) == 50 and len(data["frontmatterFields"]) == 50
    assert [w.code for w in out.warnings] == [
        "INDEX_STALE",
        "TOP_LEVEL_FOLDERS_TRUNCATED",
        "TOP_TAGS_TRUNCATED",
        "FRONTMATTER_FIELDS_TRUNCATED",
    ]
    assert data["indexFreshness"] == "stale"


def test_empty_snapshot_zeros(snap, make_reader) -> None:
    settings, _ = snap({"only.txt": "not a note"})
    reader = make_reader(settings)
    assert _body(core.overview(reader))["data"] == {
        "noteCount": 0,
        "chunkCount": 0,
        "topLevelFolders": [],
        "topTags": [],
        "frontmatterFields": [],
        "indexFreshness": "fresh",
    }
    tree = core.tree(reader).data.model_dump(by_alias=True)
    assert tree["root"] == {"path": "", "noteCount": 0, "childFolders": 0, "children": []}
    assert core.tags(reader).data.tags == [] and core.facets(reader).data.fields == []


@pytest.mark.parametrize("state", ["stale", "pending", "updating", "unknown"])
def test_freshness_warning_first(snap, make_reader, state: str) -> None:
    settings, _ = snap(VAULT)
    reader = make_reader(settings, state)
    for out in (core.overview(reader), core.tree(reader), core.tags(reader), core.facets(reader)):
        assert out.data.index_freshness == state and out.freshness == state
        assert out.warnings[0].code == f"INDEX_{state.upper()}"
        assert len(out.warnings) == 1


def test_no_snapshot_and_incompatible(tmp_path, make_reader, snap) -> None:
    from query.snapfactory import settings_for

    vault = tmp_path / "empty"
    vault.mkdir()
    reader = make_reader(settings_for(vault))
    for call in (core.overview, core.tree, core.tags, core.facets):
        with pytest.raises(IndexNotFound) as exc:
            call(reader)
        assert "vault-agent index" in exc.value.message
    settings, factory = snap(VAULT)
    factory.commit(["index.md"], fingerprint="other-config")
    reader = make_reader(settings)
    for call in (core.overview, core.tree, core.tags, core.facets):
        with pytest.raises(IndexIncompatible) as exc2:
            call(reader)
        assert "reindex" in exc2.value.message


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        (core.tree, {"depth": 0}),
        (core.tree, {"depth": 11}),
        (core.tree, {"limit": 0}),
        (core.tree, {"limit": 501}),
        (core.tags, {"limit": 0}),
        (core.tags, {"limit": 201}),
        (core.facets, {"limit": 0}),
        (core.facets, {"limit": 201}),
        (core.tags, {"limit": True}),
    ],
)
def test_invalid_parameters(snap, make_reader, call, kwargs) -> None:
    settings, _ = snap(VAULT)
    with pytest.raises(InvalidParameter):
        call(make_reader(settings), **kwargs)
