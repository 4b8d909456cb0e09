"""What a long-running reader keeps: the live snapshots and their segments, nothing per commit.

Issue 32: `serve --watch` grew ~45 MB a minute under edits. Among the causes, a preloaded
snapshot that no request made current before the next commit stayed loaded forever (with
every segment it named), and DuckDB kept the footer of every Parquet file it ever read.
These tests count what the reader and the query caches hold after many commits (counted,
not timed), so a retention that comes back fails here, not after months of editing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import wait_until

from query.conftest import ReaderFactory
from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings, load_settings
from vault_agent.contracts import Manifest
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.publish import ReaderPreload
from vault_agent.query import duck_store, search_engine
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured import columnar, relations
from vault_agent.reader_leases import leased_snapshots
from vault_agent.server.context import build_context, close_context


def _note(i: int, extra: str = "") -> str:
    tag = ["project", "area", "idea"][i % 3]
    return f"---\ntags: [{tag}]\nstatus: {'active' if i % 2 else 'done'}\npriority: {i % 5}\n---\n# Note {i}\n\nbody {i} pipeline garden\n{extra}"


def _vault(root: Path, notes: int) -> Settings:
    root.mkdir(parents=True)
    for i in range(notes):
        (root / f"n{i:02d}.md").write_text(_note(i), encoding="utf-8")
    return load_settings({"vault": root, "index_dir": root.parent / "state"}, env={})


def _schemas(reader: SnapshotReader) -> list[str]:
    rows = reader._stores.current.db.execute(  # noqa: SLF001 - white box: what the database holds
        "SELECT DISTINCT schema_name FROM information_schema.schemata WHERE schema_name LIKE 's%' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def _current(settings: Settings) -> Manifest:
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    return manifest


def _assert_holds_only(reader: SnapshotReader, manifest: Manifest) -> None:
    """The reader holds the current snapshot only, and exactly the segments it names."""
    reader.settle()
    held = reader.held()
    assert (held["snapshots"], held["pending_drops"]) == (1, 0), held
    assert held["segments"] == held["store_segments"] == len(manifest.segments), held
    assert _schemas(reader) in ([], [f"s{manifest.snapshot_id}"])  # bound lazily or in the background


def test_preloads_no_request_made_current_are_released(tmp_path: Path, make_reader: ReaderFactory) -> None:
    """Commits of an in-process writer with no request in between (hours of edits with no
    agent asking, or a compaction or an embedding commit right behind an edit): each is
    preloaded, none becomes current; each preload supersedes the older ones, and the next
    request's switch releases the last one it replaces, with their segments."""
    settings = _vault(tmp_path / "v", 6)
    build_index(settings)
    reader = make_reader(settings)
    with reader.acquire():
        pass
    publish = (ReaderPreload(settings.index_dir),)
    for k in range(12):
        (settings.vault / f"n{k % 6:02d}.md").write_text(_note(k % 6, f"edit {k}"), encoding="utf-8")
        build_index(settings, hooks=publish)  # a commit, and a compaction's now and then
        reader.settle()
        assert reader.held()["snapshots"] == 2  # the current one and the newest preload
    with reader.acquire() as view:
        assert view.manifest.snapshot_id == _current(settings).snapshot_id
    _assert_holds_only(reader, _current(settings))


def test_a_snapshot_pinned_across_commits_is_dropped_when_its_request_ends(
    tmp_path: Path, make_reader: ReaderFactory
) -> None:
    settings = _vault(tmp_path / "v", 4)
    build_index(settings)
    reader = make_reader(settings)
    publish = (ReaderPreload(settings.index_dir),)
    with reader.acquire() as old:
        first = old.manifest.snapshot_id
        for k in range(5):
            (settings.vault / "n00.md").write_text(_note(0, f"edit {k}"), encoding="utf-8")
            build_index(settings, hooks=publish)
            with reader.acquire() as new:
                assert new.manifest.snapshot_id > first
        assert old.con.execute("SELECT count(*) FROM notes").fetchone() == (4,)  # still its own
        reader.settle()
        assert reader.held()["snapshots"] == 2  # the pinned one and the current one
    _assert_holds_only(reader, _current(settings))


def test_past_its_budget_the_database_moves_to_a_new_generation(
    tmp_path: Path, make_reader: ReaderFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dropped segments' dead weight in DuckDB (footers it keeps) is bounded: past the budget
    the current snapshot moves to a new database and the old one is closed; answers stay
    the same, and a request holding the old generation keeps it until it ends."""
    monkeypatch.setattr(duck_store, "DEAD_BYTES_BUDGET", 0)
    settings = _vault(tmp_path / "v", 5)
    build_index(settings)
    reader = make_reader(settings)
    publish = (ReaderPreload(settings.index_dir),)
    generations = set()
    with reader.acquire() as held:
        held_store = reader._stores.current  # noqa: SLF001
        for k in range(8):
            (settings.vault / f"n{k % 5:02d}.md").write_text(_note(k % 5, f"edit {k}"), encoding="utf-8")
            build_index(settings, hooks=publish)
            with reader.acquire() as view:
                assert view.con.execute("SELECT count(*) FROM notes").fetchone() == (5,)
                chunks = view.con.execute("SELECT count(*) FROM chunks").fetchone()
                assert chunks == (view.manifest.chunk_count,)
            reader.settle()  # a renewal the drops started
            generations.add(reader.held()["generation"])
        assert not held_store.closed  # still pinned by this request
        assert held.con.execute("SELECT count(*) FROM notes").fetchone() == (5,)
    assert len(generations) > 2
    with reader.acquire():
        pass
    reader.settle()
    assert held_store.closed
    open_stores = [s for s in reader._stores._users if not s.closed]  # noqa: SLF001
    assert len(open_stores) <= 2


# ----------------------------------------------------------------------- a serving process
@pytest.fixture
def serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppContext]:
    monkeypatch.setenv("VAULT_AGENT_SEMANTIC", "off")  # the lexical side is what this counts
    settings = _vault(tmp_path / "v", 24)
    build_index(settings)
    ctx = build_context(settings, watch=True)
    try:
        yield ctx
    finally:
        close_context(ctx)


def _call(ctx: AppContext, name: str, **raw: Any) -> dict[str, Any]:
    op = CATALOG.named(name)
    return body_of(op, invoke(op, ctx, raw))


def _edit_and_wait(ctx: AppContext, k: int) -> None:
    assert ctx.writer is not None
    rel = f"n{k % 24:02d}.md"
    (ctx.settings.vault / rel).write_text(_note(k % 24, f"edit {k}"), encoding="utf-8")
    seq = ctx.writer.append([NewEvent("upsert", rel, origin="tool")])
    assert ctx.writer.wait_for_seq(seq, 60) is not None


def test_serving_many_commits_holds_the_live_snapshot_and_bounded_caches(serving: AppContext) -> None:
    """`serve --watch` in process: commits (compactions among them) with the query mix between
    some of them, one request holding a snapshot across several commits. Afterwards the
    reader and every per-reader cache hold the current snapshot's segments only."""
    ctx = serving
    release = threading.Event()
    pinned = threading.Event()

    def long_request() -> None:
        with ctx.reader.acquire():
            pinned.set()
            release.wait(60)

    holder = threading.Thread(target=long_request)
    holder.start()
    assert pinned.wait(30)
    for k in range(45):
        _edit_and_wait(ctx, k)
        if k == 20:
            release.set()
            holder.join(30)
        if k % 3 == 0:  # some commits see no request before the next one
            _call(ctx, "search", q="pipeline garden")
            _call(ctx, "overview")
            _call(ctx, "query", tags=["project"], sort="-mtime", limit=5)
            _call(ctx, "query", where=[{"field": "priority", "op": ">=", "value": 2}], limit=5)
            _call(ctx, "get-note-outline", path=f"n{k % 24:02d}.md")

    def settled() -> bool:
        """The writer's last commit (a compaction may follow the edits) went through every
        cache, and nothing was committed meanwhile."""
        before = _current(ctx.settings).snapshot_id
        _call(ctx, "query", tags=["area"], limit=5)
        ctx.reader.settle()
        return _current(ctx.settings).snapshot_id == before

    wait_until(settled, 60, "the writer to settle")
    manifest = _current(ctx.settings)
    assert manifest.snapshot_id > 45
    _assert_holds_only(ctx.reader, manifest)
    live = {s.segment_id for s in manifest.segments}
    rel_cache = relations._caches.of(ctx.reader)  # noqa: SLF001 - white box: the caches' entries
    assert set(rel_cache.segments) <= live and len(rel_cache.snapshots) <= relations.KEEP_SNAPSHOTS
    col_cache = columnar._caches.of(ctx.reader)  # noqa: SLF001
    assert set(col_cache.props) <= live and set(col_cache.tags) <= live
    assert len(col_cache.snapshots) <= relations.KEEP_SNAPSHOTS
    assert len(search_engine._OPEN) <= search_engine.OPEN_KEPT  # noqa: SLF001
    kinds = [kind for kind, _ in ctx.snapshot_cache]
    assert all(kinds.count(k) <= 2 for k in kinds)


def test_the_reader_leases_what_it_holds(tmp_path: Path, make_reader: ReaderFactory) -> None:
    """The GC keeps the files of every snapshot a reader holds (reader_leases.py): the lease
    names the current snapshot and one a request still pins, and goes with the reader."""
    settings = _vault(tmp_path / "v", 3)
    build_index(settings)
    reader = make_reader(settings)
    publish = (ReaderPreload(settings.index_dir),)
    with reader.acquire() as old:
        first = old.manifest.snapshot_id
        (settings.vault / "n00.md").write_text(_note(0, "edit"), encoding="utf-8")
        build_index(settings, hooks=publish)
        with reader.acquire() as new:
            reader.settle()
            assert leased_snapshots(settings.index_dir) == {first, new.manifest.snapshot_id}
    reader.settle()
    assert leased_snapshots(settings.index_dir) == {_current(settings).snapshot_id}
    reader.close()
    assert leased_snapshots(settings.index_dir) == set()


def test_query_caches_let_go_of_what_the_reader_drops(tmp_path: Path, make_reader: ReaderFactory) -> None:
    """A per-reader cache keyed by segment lets go of a segment when the reader drops it,
    not when that cache happens to be used again (per_owner.forget_released)."""
    settings = _vault(tmp_path / "v", 4)
    build_index(settings)
    reader = make_reader(settings)
    with reader.acquire() as view:
        relations.attach(reader, view)  # vault_query's notes table of this snapshot's segments
        first = view.manifest
    cache = relations._caches.of(reader)  # noqa: SLF001
    assert set(cache.segments) == {s.segment_id for s in first.segments}
    build_index(settings, full=True)  # every note in new segments: the old ones leave
    with reader.acquire() as view:
        assert not {s.segment_id for s in first.segments} & {s.segment_id for s in view.manifest.segments}
    reader.settle()
    assert cache.segments == {} and cache.snapshots == {}


def test_commits_under_edits_log_nothing_at_info(
    serving: AppContext, caplog: pytest.LogCaptureFixture
) -> None:
    """Months of `serve --watch` under edits: a commit, its preload and the requests between
    them write no INFO line (issue 32 item 6; request lines come from the HTTP layer); what
    a commit did stays at DEBUG for whoever asks (VAULT_AGENT_LOG_LEVEL=DEBUG)."""
    caplog.set_level(logging.DEBUG, logger="vault_agent")
    for k in range(8):
        _edit_and_wait(serving, k)
        _call(serving, "search", q="pipeline garden")
        _call(serving, "overview")
    ours = [r for r in caplog.records if r.name.startswith("vault_agent")]
    assert [r for r in ours if r.getMessage() == "snapshot loaded"]  # the capture sees the commits
    assert [(r.name, r.getMessage()) for r in ours if r.levelno >= logging.INFO] == []
