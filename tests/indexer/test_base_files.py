"""`.base` files in the snapshot: recorded by every kind of build, their texts kept once
per content, collected when no manifest names them, and counted by freshness."""

from __future__ import annotations

import os
from pathlib import Path

from engine_support import current_manifest, make_settings, note_text, write
from testkit import wait_until

from vault_agent.contracts import BASES_DIR, MAX_BASE_BYTES, BaseFileRef, base_text_name
from vault_agent.freshness import StatChecker, compute_freshness
from vault_agent.indexer.build import build_index
from vault_agent.indexer.build_paths import event_paths
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.eventlog import Event
from vault_agent.indexer.scan import KnownNote
from vault_agent.indexer.snapshot import GarbageCollector
from vault_agent.indexer.watch_filter import NoteFilter
from vault_agent.paths import vault_for_settings

BOOKS = "filters: file.hasTag('book')\nviews:\n  - type: table\n    name: Books\n"


def _recorded(index_dir: Path) -> dict[str, BaseFileRef]:
    return {ref.path: ref for ref in current_manifest(index_dir).bases}


def _text(index_dir: Path, ref: BaseFileRef) -> bytes:
    assert ref.sha256 is not None
    return (index_dir / BASES_DIR / base_text_name(ref.sha256)).read_bytes()


def test_a_full_build_records_every_base_with_its_text(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    write(vault, "Reading.base", BOOKS)
    write(vault, "Sub/Other.BASE", "views: []\n")
    write(vault, ".obsidian/hidden.base", BOOKS)  # excluded folder
    write(vault, "big.base", "#" * (MAX_BASE_BYTES + 1))
    s = make_settings(vault)
    m = build_index(s, full=True)
    assert m.note_count == 1
    bases = _recorded(s.index_dir)
    assert sorted(bases) == ["Reading.base", "Sub/Other.BASE", "big.base"]
    assert _text(s.index_dir, bases["Reading.base"]) == BOOKS.encode()
    assert bases["big.base"].sha256 is None and bases["big.base"].size == MAX_BASE_BYTES + 1
    st = (vault / "Reading.base").stat()
    assert (bases["Reading.base"].mtime_ns, bases["Reading.base"].size) == (st.st_mtime_ns, st.st_size)


def test_catch_up_sees_new_changed_and_deleted_bases_and_gc_drops_old_texts(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    write(vault, "Reading.base", BOOKS)
    s = make_settings(vault)
    build_index(s)
    first = _recorded(s.index_dir)["Reading.base"]
    write(vault, "Reading.base", BOOKS + "  - type: cards\n    name: Covers\n")
    os.utime(vault / "Reading.base", ns=(first.mtime_ns + 10**9, first.mtime_ns + 10**9))
    write(vault, "New.base", "views: []\n")
    m = build_index(s)  # catch-up: a stat scan, events, one build
    now = _recorded(s.index_dir)
    assert sorted(now) == ["New.base", "Reading.base"] and m.note_count == 1
    assert now["Reading.base"].sha256 != first.sha256
    assert b"Covers" in _text(s.index_dir, now["Reading.base"])
    (vault / "New.base").unlink()
    build_index(s)
    assert sorted(_recorded(s.index_dir)) == ["Reading.base"]
    old = s.index_dir / BASES_DIR / base_text_name(first.sha256 or "")
    assert old.exists()  # the grace period protects it from readers still holding it
    gc = GarbageCollector(s.index_dir, keep=1, grace_s=0.0)
    gc.collect()
    assert not old.exists()
    assert _text(s.index_dir, _recorded(s.index_dir)["Reading.base"])  # the live text stays


def test_a_base_text_seen_again_is_kept_for_the_manifest_naming_it(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Reading.base", BOOKS)
    s = make_settings(vault)
    build_index(s)
    sha = _recorded(s.index_dir)["Reading.base"].sha256
    text = s.index_dir / BASES_DIR / base_text_name(sha or "")
    os.utime(text, (1_000_000, 1_000_000))  # long unreferenced, as far as its age says
    (vault / "Reading.base").unlink()
    build_index(s)
    write(vault, "Reading.base", BOOKS)  # the same content again
    build_index(s)
    assert os.stat(text).st_mtime > 1_000_000  # touched: the GC's age check keeps it
    GarbageCollector(s.index_dir, keep=1, grace_s=60.0).collect()
    assert text.exists()


def test_events_name_bases_and_folders_holding_them(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Projects/Plan.base", BOOKS)
    write(vault, "Projects/p.md", note_text(2))
    s = make_settings(vault)
    v = vault_for_settings(s)
    assert NoteFilter(v)("modified", str(vault / "Projects/Plan.base"), False) == "Projects/Plan.base"
    assert NoteFilter(v)("modified", str(vault / "Projects/Plan.basex"), False) is None
    known = {"Projects/Plan.base": KnownNote(0, 0, "")}
    folder = Event("delete", "Projects", origin="watcher", seq=1, ts=0.0)
    notes, _, bases = event_paths(v, {}, [folder], None, known)
    assert bases == ["Projects/Plan.base"]
    one = Event("upsert", "Other.base", origin="watcher", seq=2, ts=0.0)
    notes, _, bases = event_paths(v, {}, [one], None, known)
    assert (notes, bases) == ([], ["Other.base"])
    rescan = Event("rescan", "", origin="scan", seq=3, ts=0.0)
    notes, _, bases = event_paths(v, {}, [rescan], None, {"Gone.base": KnownNote(0, 0, "")})
    assert (notes, bases) == (["Projects/p.md"], ["Gone.base", "Projects/Plan.base"])


def test_a_watching_writer_records_a_base_edit(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    s = make_settings(vault, debounce_ms=30)
    with Writer(s):
        wait_until(lambda: (s.index_dir / "CURRENT").exists(), 60, "the first snapshot")
        write(vault, "Reading.base", BOOKS)
        wait_until(lambda: "Reading.base" in _recorded(s.index_dir), 60, "the base recorded")
        (vault / "Reading.base").rename(vault / "Moved.base")
        wait_until(lambda: sorted(_recorded(s.index_dir)) == ["Moved.base"], 60, "the move recorded")


def test_a_base_changed_without_a_writer_reads_stale(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    write(vault, "Reading.base", BOOKS)
    s = make_settings(vault)
    m = build_index(s)
    assert compute_freshness(s, m, stat_checker=StatChecker(s)) == "fresh"
    write(vault, "Reading.base", BOOKS + "# edited\n")
    assert compute_freshness(s, m, stat_checker=StatChecker(s)) == "stale"
