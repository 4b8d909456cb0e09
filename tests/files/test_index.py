"""End to end with the real engine and query layer: writes are indexed and read back.

Agent-style sequence: read → edit with expected_sha256 + wait_for_index → search finds the
new text; and a burst of tool writes ends in an index equal to a full reindex.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.freshness import StatChecker, compute_freshness, read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.server.context import build_context, close_context

from .conftest import make_ctx, sha


def _settings(vault_dir: Path, state: str = "state") -> Settings:
    return Settings(vault=vault_dir, index_dir=vault_dir.parent / state, writes_enabled=True)


@pytest.fixture
def live(vault_dir: Path) -> Iterator[AppContext]:
    ctx = build_context(_settings(vault_dir), watch=True)
    try:
        yield ctx
    finally:
        close_context(ctx)


def _call(ctx: AppContext, name: str, **raw: Any) -> dict[str, Any]:
    op = CATALOG.named(name)
    return body_of(op, invoke(op, ctx, raw))


def _fresh(settings: Settings) -> str:
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    return compute_freshness(settings, manifest, stat_checker=StatChecker(settings))


def _index_rows(settings: Settings) -> dict[str, list[tuple[Any, ...]]]:
    reader = SnapshotReader(settings, make_ctx(settings.vault).vault)
    try:
        with reader.acquire() as view:
            return {
                "notes": view.con.execute(
                    "select path, sha256, size, title, heading_count, chunk_count from notes order by path"
                ).fetchall(),
                "links": view.con.execute(
                    "select path, ordinal, target, anchor, kind, line from links order by path, ordinal"
                ).fetchall(),
                "chunks": view.con.execute(
                    "select path, ordinal, text from chunks order by path, ordinal"
                ).fetchall(),
            }
    finally:
        reader.close()


def test_agent_reads_its_own_writes(live: AppContext, vault_dir: Path) -> None:
    read = _call(live, "read", path="notes/a.md", full=True)
    assert "alpha line" in read["data"]["text"]
    digest = sha((vault_dir / "notes/a.md").read_bytes())
    body = _call(
        live,
        "edit",
        path="notes/a.md",
        old_text="alpha line",
        new_text="zebracorn pasture",
        expected_sha256=digest,
        wait_for_index=True,
    )
    assert body["warnings"] == []
    assert body["data"]["indexed"] is True
    assert isinstance(body["data"]["snapshot_id"], int)
    found = _call(live, "search", q="zebracorn", mode="lexical")
    assert [r["path"] for r in found["data"]["results"]] == ["notes/a.md"]
    created = _call(live, "create", path="inbox/new.md", content="# New\n\nquasarfish\n", wait_for_index=True)
    assert created["data"]["indexed"] is True
    assert [r["path"] for r in _call(live, "search", q="quasarfish", mode="lexical")["data"]["results"]] == [
        "inbox/new.md"
    ]
    moved = _call(live, "mv", source="inbox/new.md", destination="kb/fish.md", wait_for_index=True)
    assert moved["data"]["indexed"] is True
    assert [r["path"] for r in _call(live, "search", q="quasarfish", mode="lexical")["data"]["results"]] == [
        "kb/fish.md"
    ]
    gone = _call(live, "rm", path="kb/fish.md", wait_for_index=True)
    assert gone["data"]["indexed"] is True
    assert _call(live, "search", q="quasarfish", mode="lexical")["data"]["results"] == []


def test_wait_without_writer_answers_at_once(vault_dir: Path) -> None:
    ctx = make_ctx(vault_dir)
    body = _call(ctx, "create", path="n.md", content="x\n", wait_for_index=True)
    assert body["data"]["indexed"] is False
    assert body["data"]["snapshot_id"] is None
    assert [w["code"] for w in body["warnings"]] == ["WRITE_NOT_INDEXED"]


def _mixed_writes(ctx: AppContext, vault_dir: Path, n: int) -> None:
    for i in range(10):
        (vault_dir / f"notes/n{i}.md").write_text(f"# N{i}\n\nlinks to [[a]] and [m](a.md)\n")
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        try:
            for i in range(n):
                target = f"notes/n{(w + i) % 10}.md"
                _call(ctx, "write", path=target, content=f"- w{w} {i}\n", mode="append")
                if i % 10 == 0:
                    _call(ctx, "create", path=f"burst/w{w}-{i}.md", content=f"# W{w} {i}\n\nword{w}x{i}\n")
                if i == 5:
                    _call(ctx, "replace", path=f"burst/w{w}-0.md", find=f"# W{w}", replace=f"# V{w}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    _call(ctx, "mv", source="notes/a.md", destination="kb/renamed.md")
    _call(ctx, "rm", path="notes/n3.md")
    _call(ctx, "mv", source="burst", destination="kb/burst")


def test_burst_with_live_writer_equals_reindex(live: AppContext, vault_dir: Path) -> None:
    _mixed_writes(live, vault_dir, 40)
    body = _call(live, "create", path="last.md", content="end\n", wait_for_index=True)
    assert body["data"]["indexed"] is True
    close_context(live)  # release the lock; the fixture's second close is a no-op
    assert _fresh(_settings(vault_dir)) == "fresh"
    full = _settings(vault_dir, "state-full")
    build_index(full, full=True)
    assert _index_rows(_settings(vault_dir)) == _index_rows(full)


def test_events_without_writer_caught_up_by_index(vault_dir: Path) -> None:
    settings = _settings(vault_dir)
    build_index(settings)
    ctx = make_ctx(vault_dir)
    _mixed_writes(ctx, vault_dir, 20)
    build_index(settings)
    assert _fresh(settings) == "fresh"
    full = _settings(vault_dir, "state-full")
    build_index(full, full=True)
    assert _index_rows(settings) == _index_rows(full)


@pytest.mark.slow
def test_burst_1000_with_live_writer_equals_reindex(live: AppContext, vault_dir: Path) -> None:
    _mixed_writes(live, vault_dir, 250)  # 4 writers x 250 appends + creates + replaces + moves
    assert (
        _call(live, "create", path="last.md", content="end\n", wait_for_index=True)["data"]["indexed"] is True
    )
    close_context(live)
    assert _fresh(_settings(vault_dir)) == "fresh"
    full = _settings(vault_dir, "state-full")
    build_index(full, full=True)
    assert _index_rows(_settings(vault_dir)) == _index_rows(full)
