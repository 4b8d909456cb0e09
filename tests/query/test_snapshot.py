"""The snapshot layer: CURRENT, tombstones, switching, refcounted drops, thread safety."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from query.snapfactory import SnapFactory, settings_for, write_vault
from vault_agent.contracts import CURRENT_FILE
from vault_agent.errors import IndexIncompatible, IndexNotFound
from vault_agent.query.snapshot import SnapshotReader


def _paths(view) -> list[str]:
    return [r[0] for r in view.con.execute("SELECT path FROM notes ORDER BY path").fetchall()]


def _db(reader: SnapshotReader) -> duckdb.DuckDBPyConnection:
    """The reader's own connection (white-box check of what it attached and dropped)."""
    db = reader._db  # noqa: SLF001
    assert db is not None, "reader is closed"
    return db


def _schemas(reader: SnapshotReader) -> list[str]:
    rows = (
        _db(reader)
        .execute(
            "SELECT DISTINCT schema_name FROM information_schema.schemata WHERE schema_name LIKE 's%' ORDER BY 1"
        )
        .fetchall()
    )
    return [r[0] for r in rows]


def _seg_objects(reader: SnapshotReader) -> list[str]:
    rows = (
        _db(reader)
        .execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1")
        .fetchall()
    )
    return [r[0] for r in rows]


def test_no_current_then_current(tmp_path, make_reader) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    settings = settings_for(vault)
    reader = make_reader(settings)
    with pytest.raises(IndexNotFound), reader.acquire():
        pass
    assert reader.current_manifest() is None
    write_vault(vault, {"a.md": "# A\n"})
    factory = SnapFactory(settings)
    factory.commit(factory.walk())
    with reader.acquire() as view:
        assert view.manifest.snapshot_id == 1 and _paths(view) == ["a.md"]
        assert view.freshness == "fresh" and view.warnings() == []
    assert reader.current_manifest().snapshot_id == 1


def test_all_tables_visible_unqualified(snap, make_reader) -> None:
    settings, _ = snap({"a.md": "---\ntags: [x]\n---\n# A\n\nsee [[b]] text\n", "b.md": "plain words\n"})
    with make_reader(settings).acquire() as view:
        con = view.con
        assert con.execute("SELECT count(*) FROM notes").fetchone() == (2,)
        assert con.execute("SELECT path, id FROM headings").fetchall() == [("a.md", "h1-a-0001")]
        assert con.execute("SELECT path, ordinal FROM chunks ORDER BY path").fetchall() == [
            ("a.md", 0),
            ("b.md", 0),
        ]
        assert con.execute("SELECT count(*) FROM terms WHERE term IN ('plain', 'words')").fetchone() == (2,)
        assert con.execute("SELECT path, target, kind FROM links").fetchall() == [("a.md", "b", "wikilink")]


def test_tombstones_and_newest_segment_wins(snap, make_reader) -> None:
    settings, factory = snap({"a.md": "# A1\n", "b.md": "# B\n", "c.md": "# C\n"})
    write_vault(settings.vault, {"a.md": "# A2\n"})
    factory.commit(["a.md"], ["b.md"])
    with make_reader(settings).acquire() as view:
        assert _paths(view) == ["a.md", "c.md"]
        assert view.con.execute("SELECT path, text FROM headings ORDER BY path").fetchall() == [
            ("a.md", "A2"),
            ("c.md", "C"),
        ]
        assert view.con.execute("SELECT count(*) FROM chunks").fetchone() == (2,)
        assert view.con.execute("SELECT count(*) FROM terms WHERE term = 'b'").fetchone() == (0,)


def test_switch_while_old_view_is_held(snap, make_reader) -> None:
    settings, factory = snap({"a.md": "# A\n", "b.md": "# B\n"})
    reader = make_reader(settings)
    with reader.acquire() as old:
        assert _paths(old) == ["a.md", "b.md"]
        write_vault(settings.vault, {"c.md": "# C\n"})
        factory.commit(["c.md"], ["a.md"])
        with reader.acquire() as new:
            assert new.manifest.snapshot_id == 2 and _paths(new) == ["b.md", "c.md"]
            assert _schemas(reader) == ["s1", "s2"]
        # The old request still sees its own snapshot, rows and all.
        assert old.manifest.snapshot_id == 1 and _paths(old) == ["a.md", "b.md"]
        assert old.con.execute("SELECT text FROM headings ORDER BY text").fetchall() == [("A",), ("B",)]
    assert _schemas(reader) == ["s2"]  # dropped when its last request ended
    # A third snapshot that no longer needs segment 1 drops its tables too.
    write_vault(settings.vault, {"b.md": "# B2\n"})
    factory.commit(["b.md"])
    with reader.acquire() as view:
        assert _paths(view) == ["b.md", "c.md"]
    assert _schemas(reader) == ["s3"]
    assert not [t for t in _seg_objects(reader) if t.startswith("seg_1_")]
    assert [t for t in _seg_objects(reader) if t.startswith("seg_2_")]


def test_incompatible_snapshot(snap, make_reader) -> None:
    settings, factory = snap({"a.md": "# A\n"})
    reader = make_reader(settings)
    with reader.acquire():
        pass
    factory.commit(["a.md"], schema_version=999)
    for _ in range(2):  # the cached verdict answers the same
        with pytest.raises(IndexIncompatible) as exc, reader.acquire():
            pass
        assert "vault-agent reindex" in exc.value.message
    factory.commit(["a.md"])
    with reader.acquire() as view:
        assert view.manifest.snapshot_id == 3


def test_current_naming_a_missing_manifest(snap, make_reader) -> None:
    settings, _ = snap({"a.md": "# A\n"})
    (settings.index_dir / CURRENT_FILE).write_text("manifest-77.json")
    with pytest.raises(IndexNotFound), make_reader(settings).acquire():
        pass


def test_concurrent_acquires_see_consistent_snapshots(snap, make_reader) -> None:
    """Views opened while commits land: every view's rows match its own manifest."""
    files = {f"n{i:03d}.md": f"# N{i}\n" for i in range(50)}
    settings, factory = snap(files)
    reader = make_reader(settings)
    stop = threading.Event()
    problems: list[str] = []
    seen: set[int] = set()

    def worker() -> int:
        calls = 0
        while not stop.is_set() or calls < 20:
            with reader.acquire() as view:
                notes = view.con.execute("SELECT count(*) FROM notes").fetchone()[0]
                heads = view.con.execute("SELECT count(*) FROM headings").fetchone()[0]
                if (notes, heads) != (view.manifest.note_count, view.manifest.heading_count):
                    problems.append(f"snapshot {view.manifest.snapshot_id}: {notes}/{heads}")
                seen.add(view.manifest.snapshot_id)
            calls += 1
        return calls

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(worker) for _ in range(8)]
        for i in range(10):
            write_vault(settings.vault, {f"m{i}.md": f"# M{i}\n## sub\n"})
            factory.commit([f"m{i}.md"], [f"n{i:03d}.md"])
        stop.set()
        total = sum(f.result() for f in futures)
    assert problems == [] and total >= 160
    assert 11 in seen
    with reader.acquire() as view:
        assert view.manifest.snapshot_id == 11
    assert _schemas(reader) == ["s11"]


def test_freshness_from_engine_state_machine(snap) -> None:
    """Without a pinned state the reader asks vault_agent.freshness (no writer → stat scan)."""
    from vault_agent.paths import vault_for_settings

    settings, _ = snap({"a.md": "# A\n"})
    reader = SnapshotReader(settings, vault_for_settings(settings))
    try:
        assert reader.recheck() == "fresh"  # forced stat scan: vault equals the snapshot
        with reader.acquire() as view:
            assert view.freshness in ("fresh", "unknown")
        write_vault(settings.vault, {"b.md": "# B\n"})
        assert reader.recheck() == "stale"
        with reader.acquire() as view:
            assert view.freshness == "stale"
            assert [w.code for w in view.warnings()] == ["INDEX_STALE"]
    finally:
        reader.close()


def test_first_request_scans_instead_of_unknown(snap) -> None:
    """A reader that never scanned answers fresh for an unmodified vault on its first request,
    and again for a newly committed snapshot (SPEC: an unmodified vault reads `fresh`)."""
    from vault_agent.paths import vault_for_settings

    settings, factory = snap({"a.md": "# A\n"})
    reader = SnapshotReader(settings, vault_for_settings(settings))
    try:
        with reader.acquire() as view:
            assert (view.freshness, view.warnings()) == ("fresh", [])
        write_vault(settings.vault, {"b.md": "# B\n"})
        factory.commit(factory.walk())
        with reader.acquire() as view:
            assert (view.manifest.snapshot_id, view.freshness) == (2, "fresh")
    finally:
        reader.close()


def test_closed_reader_refuses(snap) -> None:
    from vault_agent.paths import vault_for_settings

    settings, _ = snap({"a.md": "# A\n"})
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    reader.close()
    with pytest.raises(IndexNotFound), reader.acquire():
        pass


def test_requests_wait_for_a_running_load_of_a_newer_snapshot(snap, make_reader) -> None:
    """Once CURRENT names a newer snapshot, no new request is answered from the old one."""
    settings, factory = snap({"a.md": "# A\n"})
    reader = make_reader(settings)
    started, release = threading.Event(), threading.Event()
    original = reader._load  # noqa: SLF001 - hold the load open to observe readers meanwhile
    loads: list[int] = []

    def slow_load(manifest):
        loads.append(manifest.snapshot_id)
        if manifest.snapshot_id == 2:
            started.set()
            assert release.wait(30)
        return original(manifest)

    reader._load = slow_load  # noqa: SLF001
    saw: list[int] = []

    def request() -> None:
        with reader.acquire() as v:
            saw.append(v.manifest.snapshot_id)
            assert _paths(v) == ["a.md", "b.md"]

    with reader.acquire() as held:  # a request already running keeps its snapshot
        assert held.manifest.snapshot_id == 1
        write_vault(settings.vault, {"b.md": "# B\n"})
        factory.commit(["b.md"])
        first = threading.Thread(target=request)
        first.start()
        assert started.wait(30)
        second = threading.Thread(target=request)
        second.start()
        assert _paths(held) == ["a.md"]
        release.set()
        first.join(30)
        second.join(30)
    assert saw == [2, 2] and loads == [1, 2]  # snapshot 2 loaded once; the second request waited
    assert _schemas(reader) == ["s2"]
