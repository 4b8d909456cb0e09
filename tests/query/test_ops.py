"""The operations of the catalog: parameters as HTTP/MCP send them, status, renderers."""

from __future__ import annotations

from typing import Any

import pytest

from query.snapfactory import settings_for, write_vault
from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.errors import IndexIncompatible, IndexNotFound, InvalidParameter
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.status import index_status

FILES = {
    "a/one.md": "---\ntags: [x, y]\ntype: note\n---\n# One\n## Sub\n",
    "a/b/two.md": "---\ntags: x\nstatus: done\n---\ntext\n",
    "bad.md": "---\n: [unclosed\n---\n# Bad fm\n",
    "top.md": "# Top\n",
}
EXPECTED_NAMES = {
    "status": ("vault_status", "/status"),
    "overview": ("vault_overview", "/overview"),
    "tree": ("vault_tree", "/tree"),
    "tags": ("vault_tags", "/tags"),
    "facets": ("vault_facets", "/facets"),
    "get-note-outline": ("get_note_outline", "/note-outline"),
    "get-document-tree": ("get_document_tree", "/document-tree"),
    "get-section-source": ("get_section_source", "/section-source"),
    "get-metadata-facets": ("get_metadata_facets", "/metadata-facets"),
}


@pytest.fixture
def ctx(snap, make_reader):
    settings, _ = snap(FILES)
    return AppContext(settings=settings, vault=vault_for_settings(settings), reader=make_reader(settings))


def _call(ctx: AppContext, name: str, raw: dict[str, Any]) -> dict[str, Any]:
    op = CATALOG.named(name)
    return body_of(op, invoke(op, ctx, raw))


def _render(ctx: AppContext, name: str, raw: dict[str, Any]) -> str:
    """What the CLI prints for `name` without --json (every read operation has a renderer)."""
    render = CATALOG.named(name).render
    assert render is not None, f"{name} has no renderer"
    return render(_call(ctx, name, raw))


def test_registered_names_and_flags() -> None:
    ops = {op.name: op for op in CATALOG}
    for name, (mcp, http) in EXPECTED_NAMES.items():
        op = ops[name]
        assert (op.mcp_name, op.http_path, op.http_method, op.kind) == (mcp, http, "GET", "read")
        assert op.idempotent and not op.destructive and op.render is not None
        assert op.envelope is (not name.startswith("get-"))
        assert op.cli_args == (("path",) if name.startswith("get-") else ())
        # Descriptions are for a model (docs/mcp.md style rule): the first sentence says when to use it.
        first = op.description.split(". ")[0].lower()
        assert op.title and ("use it" in first or "call it" in first)


def test_tree_params_http_and_mcp_spelling(ctx) -> None:
    http = _call(ctx, "tree", {"depth": "1", "limit": "10", "directOnly": "true"})
    mcp = _call(ctx, "tree", {"depth": 1, "limit": 10, "direct_only": True})
    assert http == mcp
    assert http["data"]["root"] == {
        "path": "",
        "noteCount": 2,
        "childFolders": 1,
        "children": [{"path": "a", "noteCount": 1, "childFolders": 1, "children": []}],
    }


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("tree", {"depth": 0}),
        ("tree", {"depth": "11"}),
        ("tree", {"limit": 501}),
        ("tree", {"limit": "many"}),
        ("tree", {"directOnly": "maybe"}),
        ("tags", {"limit": 0}),
        ("tags", {"limit": 201}),
        ("facets", {"limit": -1}),
        ("facets", {"limit": 1.5}),
        ("overview", {"limit": 5}),
        ("get-note-outline", {}),
        ("get-note-outline", {"path": "x" * 5000}),
    ],
)
def test_invalid_parameters(ctx, name: str, raw: dict[str, Any]) -> None:
    with pytest.raises(InvalidParameter) as exc:
        _call(ctx, name, raw)
    assert exc.value.code == "INVALID_PARAMETER" and "xxxx" not in exc.value.message


def test_status_body(ctx) -> None:
    body = _call(ctx, "status", {})
    assert body == {
        "data": {
            "indexFreshness": "fresh",
            "snapshotId": 1,
            "noteCount": 4,
            "chunkCount": 5,
            "invalidFrontmatterCount": 1,
            "lastCommitAt": "2026-01-01T00:00:00Z",
            "schemaVersion": 4,
        },
        "warnings": [],
    }


def test_status_local_verbose_and_real_freshness(snap) -> None:
    settings, _ = snap(FILES)
    out = index_status(settings, verbose=True)
    body = body_of(CATALOG.named("status"), out)
    assert body["data"]["indexFreshness"] == "fresh"  # on-demand stat scan, no writer
    assert body["data"]["details"] == {
        "skipped": {},
        "invalidFrontmatterPaths": ["bad.md"],
        "invalidFrontmatterPathsTruncated": False,
        "binaryPaths": [],
        "caseTwinPaths": [],
        "segmentCount": 1,
        "appliedSeq": 1,
        "semanticSearch": "pending",  # no writer has embedded this index yet
        "embeddedShare": 0.0,
        "embeddedNotes": 0,
        "embeddingEtaSeconds": None,
        "embedder": "none",  # and none computes them now
        "embedderRestarts": 0,
        "staleReason": None,
        "restarts": {},  # no live writer: no supervised threads to report
    }
    write_vault(settings.vault, {"new.md": "# New\n"})
    stale = index_status(settings)
    assert stale.data.index_freshness == "stale" and [w.code for w in stale.warnings] == ["INDEX_STALE"]
    assert "details" not in body_of(CATALOG.named("status"), stale)["data"]


def test_status_without_snapshot_and_incompatible(tmp_path, snap) -> None:
    vault = tmp_path / "none"
    vault.mkdir()
    with pytest.raises(IndexNotFound) as exc:
        index_status(settings_for(vault))
    assert exc.value.to_body() == {
        "error": {
            "code": "INDEX_NOT_FOUND",
            "message": "no index snapshot exists yet; run 'vault-agent index'",
        }
    }
    settings, factory = snap(FILES)
    factory.commit(["top.md"], fingerprint="changed")
    reader = SnapshotReader(settings, vault_for_settings(settings))
    try:
        with pytest.raises(IndexIncompatible) as inc:
            index_status(settings, reader=reader)
    finally:
        reader.close()
    assert inc.value.to_body()["error"]["code"] == "INDEX_INCOMPATIBLE"
    assert "vault-agent reindex" in inc.value.message


def test_renderers(ctx) -> None:
    # Warnings are printed once by the CLI on stderr, not by the renderer.
    assert (
        _render(ctx, "tree", {"limit": 2})
        == "/  4\n  a/  2  (+1 subfolder not shown; raise --depth or --limit)\n\nindex: fresh"
    )
    outline = _render(ctx, "get-note-outline", {"path": "a/one.md"})
    assert outline == "a/one.md  (one)\n# One  [h1-one-0001]\n  ## Sub  [h2-sub-0002]"
    tags = _render(ctx, "tags", {})
    assert tags == "  notes  tag\n      2  x\n      1  y\n\nindex: fresh"
    for name in EXPECTED_NAMES:
        raw = {"path": "a/one.md"} if name.startswith("get-") else {}
        text = _render(ctx, name, raw)
        assert isinstance(text, str) and text and str(ctx.settings.vault) not in text
