"""build_index end to end: real files, real Parquet, rows compared through DuckDB."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from engine_support import make_settings, note_text, snapshot_rows, write

from vault_agent.contracts import (
    NOTES_SCHEMA,
    PARSER_VERSION,
    ROW_GROUP_SIZE,
    SCHEMA_VERSION,
    SEGMENTS_DIR,
    SNAPSHOTS_DIR,
    TABLE_SORT,
    TABLES,
)
from vault_agent.errors import IndexBusy
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer import compaction
from vault_agent.indexer.build import build_index
from vault_agent.indexer.lock import WriterLock, writer_lock_held
from vault_agent.indexer.snapshot import GarbageCollector


def _vault(tmp_path: Path, n: int = 12) -> Path:
    vault = tmp_path / "v"
    for i in range(n):
        write(vault, f"{['a', 'b', 'c/d'][i % 3]}/n{i}.md", note_text(i))
    return vault


def _full_rows(vault: Path, tmp_path: Path) -> dict[str, list[tuple[object, ...]]]:
    other = make_settings(vault, tmp_path / "full-idx")
    build_index(other, full=True)
    return snapshot_rows(other.index_dir)


def test_first_build_layout_and_manifest(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    write(vault, "bad.md", "---\n[unclosed: list\n---\n# T\n")
    write(vault, ".obsidian/x.md", "# hidden\n")
    write(vault, "notes.txt", "not a note")
    os.symlink(vault / "a" / "n0.md", vault / "link.md")
    s = make_settings(vault)
    m = build_index(s)
    assert (m.snapshot_id, m.schema_version, m.parser_version) == (1, SCHEMA_VERSION, PARSER_VERSION)
    assert m.config_fingerprint == s.index_fingerprint()
    assert (m.note_count, m.invalid_frontmatter_count) == (13, 1)
    assert m.skipped == {"symlink": 1}
    assert (s.index_dir / "CURRENT").read_text() == "manifest-1.json\n"
    assert (s.index_dir / SNAPSHOTS_DIR / "manifest-1.json").is_file()
    rows = snapshot_rows(s.index_dir)
    assert sorted(r[0] for r in rows["notes"]) == sorted(
        ["bad.md"] + [f"{['a', 'b', 'c/d'][i % 3]}/n{i}.md" for i in range(12)]
    )
    assert m.chunk_count == len(rows["chunks"]) and m.heading_count == len(rows["headings"])
    # Files are sorted per TABLE_SORT with the contract schema.
    (seg,) = m.segments
    for table, schema in TABLES.items():
        tbl = pq.read_table(s.index_dir / SEGMENTS_DIR / seg.files[table])
        assert tbl.schema.equals(schema, check_metadata=False)
        keys = list(TABLE_SORT[table])
        assert (
            tbl.select(keys).to_pylist()
            == tbl.sort_by([(k, "ascending") for k in keys]).select(keys).to_pylist()
        )
        assert pq.ParquetFile(s.index_dir / SEGMENTS_DIR / seg.files[table]).metadata.num_rows == tbl.num_rows
    assert ROW_GROUP_SIZE == 8192


def test_incremental_commit_costs_the_change(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault)
    m1 = build_index(s)
    write(vault, "a/n0.md", note_text(0, "edited"))
    write(vault, "new.md", "# New\n")
    (vault / "b" / "n1.md").unlink()
    m2 = build_index(s)
    assert m2.snapshot_id == 2 and m2.note_count == 12
    first, second = m2.segments
    assert first.segment_id == m1.segments[0].segment_id
    assert first.deleted == ["a/n0.md", "b/n1.md"]  # tombstones, not a rewrite
    assert second.note_count == 2  # only the changed notes
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)
    # Nothing changed → no new snapshot.
    assert build_index(s).snapshot_id == 2


def test_move_and_folder_delete(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault)
    build_index(s)
    os.rename(vault / "a" / "n0.md", vault / "b" / "moved.md")
    for f in (vault / "c" / "d").iterdir():
        f.unlink()
    (vault / "c" / "d").rmdir()
    build_index(s)
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_same_stat_rewrite_needs_hash_pass(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 3)
    s = make_settings(vault)
    build_index(s)
    p = vault / "a" / "n0.md"
    st = p.stat()
    p.write_text(note_text(0).replace("body 0", "BODY 0"), encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert build_index(s).snapshot_id == 1  # stat scan cannot see it
    from vault_agent.indexer.build import Indexer

    with WriterLock(s.index_dir):
        idx = Indexer(s)
        idx.load()
        m = idx.catch_up(hash_pass=True)
    assert m is not None and m.snapshot_id == 2
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_full_reindex_is_deterministic(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault)
    build_index(s)
    rows = snapshot_rows(s.index_dir)
    m = build_index(s, full=True)
    assert m.snapshot_id == 2 and [x.segment_id for x in m.segments] == [2]
    assert snapshot_rows(s.index_dir) == rows
    # Readers of snapshot 1 keep their files: nothing is collected inside the grace period.
    assert GarbageCollector(s.index_dir).collect() == []
    assert (s.index_dir / SEGMENTS_DIR / "seg-1.notes.parquet").is_file()


def test_second_writer_is_refused(tmp_path: Path) -> None:
    s = make_settings(_vault(tmp_path, 2))
    with WriterLock(s.index_dir):
        assert writer_lock_held(s.index_dir)
        with pytest.raises(IndexBusy) as exc:
            build_index(s)
        assert str(tmp_path) not in exc.value.message and str(os.getpid()) not in exc.value.message
    assert not writer_lock_held(s.index_dir)
    assert build_index(s).note_count == 2


def test_gc_never_deletes_what_a_kept_manifest_names(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 4)
    s = make_settings(vault)
    build_index(s)
    for k in range(6):
        write(vault, f"e{k}.md", f"# E{k}\n")
        build_index(s)
    gc = GarbageCollector(s.index_dir, keep=3, grace_s=120)
    future = os.path.getmtime(s.index_dir / "CURRENT") + 10_000
    deleted = gc.collect(now=future)
    assert deleted  # old snapshots went
    names = sorted(os.listdir(s.index_dir / SNAPSHOTS_DIR))
    assert names == ["manifest-5.json", "manifest-6.json", "manifest-7.json"]
    for name in names:
        man = read_current_manifest(s.index_dir) if name == "manifest-7.json" else None
        from vault_agent.contracts import Manifest

        man = Manifest.model_validate_json((s.index_dir / SNAPSHOTS_DIR / name).read_bytes())
        for ref in man.segments:
            for f in ref.files.values():
                assert (s.index_dir / SEGMENTS_DIR / f).is_file()
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_gc_grace_protects_recently_unreferenced_files(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 2)
    s = make_settings(vault)
    build_index(s)
    build_index(s, full=True)
    build_index(s, full=True)
    build_index(s, full=True)
    build_index(s, full=True)
    gc = GarbageCollector(s.index_dir, keep=1, grace_s=3600)
    assert gc.collect() == []  # unreferenced, but only just
    assert (s.index_dir / SEGMENTS_DIR / "seg-1.notes.parquet").is_file()


def test_compaction_merges_small_segments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path, 3)
    s = make_settings(vault)
    build_index(s)
    monkeypatch.setattr(compaction, "MAX_SMALL_SEGMENTS", 3)
    for k in range(5):
        write(vault, f"x{k}.md", f"# X{k}\n\ntext {k}\n")
        m = build_index(s)
    assert len(m.segments) <= 4
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_tombstone_heavy_segment_is_rewritten(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 6)
    s = make_settings(vault)
    build_index(s)
    for i in range(3):
        write(vault, f"{['a', 'b', 'c/d'][i % 3]}/n{i}.md", note_text(i, "v2"))
    m = build_index(s)
    assert all(len(x.deleted) / x.note_count <= compaction.TOMBSTONE_RATIO for x in m.segments)
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_config_change_makes_index_rebuild(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 6)
    build_index(make_settings(vault))
    s2 = make_settings(vault, exclude=["b/"])
    m = build_index(s2)
    assert m.config_fingerprint == s2.index_fingerprint()
    assert sorted(r[0] for r in snapshot_rows(s2.index_dir)["notes"]) == [
        "a/n0.md",
        "a/n3.md",
        "c/d/n2.md",
        "c/d/n5.md",
    ]


def test_rescan_event_reconciles_without_dropping_unchanged(tmp_path: Path) -> None:
    from vault_agent.indexer.build import Indexer
    from vault_agent.indexer.eventlog import NewEvent

    vault = _vault(tmp_path)
    s = make_settings(vault)
    build_index(s)
    write(vault, "a/n0.md", note_text(0, "changed"))
    write(vault, "z/new.md", "# New\n")
    (vault / "b" / "n1.md").unlink()
    with WriterLock(s.index_dir):
        idx = Indexer(s)
        idx.load()
        idx.log.append([NewEvent("rescan", "", None, None, None, "watcher")])
        m = idx.apply(idx.log.read_after(idx.applied_seq))
        assert m is not None and m.note_count == 12
        idx.log.append([NewEvent("rescan", "c", None, None, None, "watcher")])
        m2 = idx.apply(idx.log.read_after(idx.applied_seq))
        assert m2 is not None and m2.note_count == 12 and m2.segments == m.segments
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_a_parser_crash_loses_only_that_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal as _signal

    from vault_agent.indexer import parse as parse_mod
    from vault_agent.indexer import parse_pool as pool_mod

    vault = tmp_path / "v"
    for i in range(300):
        write(vault, f"d{i % 3}/n{i:03d}.md", f"# N{i}\n\ntext {i}\n")
    write(vault, "d1/crash.md", "# boom\n")
    real = parse_mod.parse_note

    def crashing(rel: str, raw: bytes, mtime_ns: int, size: int, ctime_ns: int | None = None):
        if rel == "d1/crash.md" and raw:
            os.kill(os.getpid(), _signal.SIGSEGV)  # what a libyaml stack overflow does
        return real(rel, raw, mtime_ns, size, ctime_ns)

    monkeypatch.setattr(parse_mod, "parse_note", crashing)
    monkeypatch.setattr(pool_mod.threading, "active_count", lambda: 1)  # fork: workers see the patch
    s = make_settings(vault)
    m = build_index(s)
    assert m.note_count == 301
    flags = NOTES_SCHEMA.names.index("flags")
    rows = {r[0]: r for r in snapshot_rows(s.index_dir)["notes"]}
    assert rows["d1/crash.md"][flags] == ["parse_error"]
    assert rows["d0/n000.md"][flags] == []


def test_odd_names_and_special_files(tmp_path: Path) -> None:
    import unicodedata

    vault = _vault(tmp_path, 3)
    nfd = unicodedata.normalize("NFD", "café.md")
    (vault / nfd).write_text("# NFD name\n", encoding="utf-8")
    (vault / "twin").mkdir()
    (vault / "twin" / unicodedata.normalize("NFC", "é.md")).write_text("# nfc\n", encoding="utf-8")
    (vault / "twin" / unicodedata.normalize("NFD", "é.md")).write_text("# nfd\n", encoding="utf-8")
    os.mkfifo(vault / "pipe.md")
    (vault / "loop").symlink_to(vault, target_is_directory=True)
    (vault / os.fsdecode(b"bad\xff.md")).write_bytes(b"# bad name\n")
    s = make_settings(vault)
    m = build_index(s)
    notes = sorted(r[0] for r in snapshot_rows(s.index_dir)["notes"])
    assert "café.md" in notes and "twin/é.md" in notes and "pipe.md" not in notes
    assert m.skipped == {
        "normalization_collision": 1,
        "special_file": 1,
        "symlink": 1,
        "undecodable_name": 1,
    }
    (vault / nfd).write_text("# NFD name, edited\n", encoding="utf-8")
    build_index(s)
    assert snapshot_rows(s.index_dir) == _full_rows(vault, tmp_path)


def test_worker_count_changes_nothing_but_the_speed(tmp_path: Path) -> None:
    """index.workers: 1 worker process or 3 produce the same rows (pool path: ≥ 256 notes)."""
    vault = tmp_path / "v"
    for i in range(300):
        write(vault, f"d{i % 5}/n{i:03d}.md", note_text(i))
    one = make_settings(vault, index_dir=tmp_path / "one", index_workers=1)
    three = make_settings(vault, index_dir=tmp_path / "three", index_workers=3)
    assert build_index(one).note_count == build_index(three).note_count == 300
    assert snapshot_rows(one.index_dir) == snapshot_rows(three.index_dir)
