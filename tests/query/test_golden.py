"""Golden bodies of every query surface over the fixture vaults, built by the real indexer.

Regenerate with pytest --update-golden (never edit the files by hand). Each file holds
the exact bytes the transports send: `dump_json(body_of(op, outcome))`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import check_golden

from vault_agent.api.invoke import body_of, dump_json, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"

ORIENTATION_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("status", "status", {}),
    ("overview", "overview", {}),
    ("tree", "tree", {}),
    ("tree-deep", "tree", {"depth": 10, "limit": 500}),
    ("tree-direct-only", "tree", {"directOnly": True, "depth": 4}),
    ("tree-limit-5", "tree", {"depth": 3, "limit": 5}),
    ("tags", "tags", {}),
    ("tags-limit-3", "tags", {"limit": 3}),
    ("facets", "facets", {}),
    ("facets-limit-2", "facets", {"limit": 2}),
]
NOTE_OPS = ("get-note-outline", "get-document-tree", "get-section-source", "get-metadata-facets")


def _ctx(tmp: Path, fixture: str) -> Iterator[AppContext]:
    vault = tmp / fixture
    shutil.copytree(REPO / "fixtures" / fixture, vault, symlinks=True)
    settings = Settings(vault=vault, index_dir=tmp / f"{fixture}-state")
    build_index(settings, full=True)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    try:
        yield AppContext(settings=settings, vault=vault_for_settings(settings), reader=reader)
    finally:
        reader.close()


@pytest.fixture(scope="module")
def orientation_ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    yield from _ctx(tmp_path_factory.mktemp("golden"), "orientation")


@pytest.fixture(scope="module")
def outline_ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    yield from _ctx(tmp_path_factory.mktemp("golden"), "outline")


def _stable(body: dict[str, Any]) -> dict[str, Any]:
    """The one run-dependent value (commit time) replaced by a marker."""
    data = body.get("data")
    if isinstance(data, dict) and "lastCommitAt" in data:
        data["lastCommitAt"] = "<commit time>"
    return body


def _check(name: str, text: str) -> None:
    check_golden(GOLDEN / f"{name}.json", text + "\n")


@pytest.mark.parametrize(("case", "op_name", "raw"), ORIENTATION_CASES)
def test_orientation_golden(
    orientation_ctx: AppContext, case: str, op_name: str, raw: dict[str, Any]
) -> None:
    op = CATALOG.named(op_name)
    body = _stable(body_of(op, invoke(op, orientation_ctx, raw)))
    _check(f"orientation.{case}", dump_json(body))


def _notes(ctx: AppContext) -> list[str]:
    with ctx.reader.acquire() as view:
        return [r[0] for r in view.con.execute("SELECT path FROM notes ORDER BY path").fetchall()]


@pytest.mark.parametrize("op_name", NOTE_OPS)
def test_per_note_golden(orientation_ctx: AppContext, outline_ctx: AppContext, op_name: str) -> None:
    op = CATALOG.named(op_name)
    for fixture, ctx in (("orientation", orientation_ctx), ("outline", outline_ctx)):
        bodies = {}
        for path in _notes(ctx):
            try:
                bodies[path] = body_of(op, invoke(op, ctx, {"path": path}))
            except Exception as exc:  # a per-note error is part of the golden answer
                bodies[path] = exc.to_body() if hasattr(exc, "to_body") else {"error": repr(exc)}
        _check(f"{fixture}.{op_name}", dump_json(bodies))


def test_goldens_have_no_absolute_paths(orientation_ctx: AppContext) -> None:
    for path in GOLDEN.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert str(REPO) not in text and "/tmp" not in text
