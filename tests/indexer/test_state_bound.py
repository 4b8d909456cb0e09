"""The state dir stays bounded: superseded manifests, segment files and engine dirs go after a
short grace unless a reader's lease holds their snapshot, files no manifest named yet keep
the long in-flight grace, and no segment keeps more dead rows than compaction's share."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engine_support import make_settings, note_text, snapshot_rows, write

from vault_agent.contracts import SEGMENTS_DIR, SNAPSHOTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer import compaction
from vault_agent.indexer.build import build_index
from vault_agent.indexer.snapshot import IN_FLIGHT_GRACE_S, GarbageCollector, manifest_name
from vault_agent.reader_leases import READERS_DIR, ReaderLease, leased_snapshots


def _files_of(state: Path, snapshot_id: int) -> set[str]:
    from vault_agent.contracts import Manifest

    man = Manifest.model_validate_json((state / SNAPSHOTS_DIR / manifest_name(snapshot_id)).read_bytes())
    return {f for ref in man.segments for f in ref.files.values()}


def test_superseded_files_go_after_the_grace_unless_a_reader_holds_them(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for i in range(6):
        write(vault, f"n{i}.md", note_text(i))
    s = make_settings(vault, tmp_path / "state")
    first = build_index(s).snapshot_id
    for k in range(5):
        write(vault, f"n{k}.md", note_text(k, f"edit {k}"))
        build_index(s)
    current = read_current_manifest(s.index_dir)
    assert current is not None
    rows = snapshot_rows(s.index_dir)
    held = _files_of(s.index_dir, first)
    lease = ReaderLease(s.index_dir)  # a request still answering from the first snapshot
    lease.hold({first})
    assert leased_snapshots(s.index_dir) == {first}
    gc = GarbageCollector(s.index_dir, keep=1, grace_s=10)
    newest = max(p.stat().st_mtime for p in (s.index_dir / SEGMENTS_DIR).iterdir())
    stray = s.index_dir / SEGMENTS_DIR / "seg-999.notes.parquet"  # written, not yet committed
    stray.write_bytes(b"in flight")
    os.utime(stray, (newest, newest))
    gc.collect(now=newest + 11)  # past the grace
    assert sorted(os.listdir(s.index_dir / SNAPSHOTS_DIR)) == sorted(
        {manifest_name(current.snapshot_id), manifest_name(first)}
    )
    live = {f for ref in current.segments for f in ref.files.values()}
    assert set(os.listdir(s.index_dir / SEGMENTS_DIR)) == live | held | {stray.name}
    lease.close()
    gc.collect(now=newest + 22)
    assert os.listdir(s.index_dir / SNAPSHOTS_DIR) == [manifest_name(current.snapshot_id)]
    assert set(os.listdir(s.index_dir / SEGMENTS_DIR)) == live | {stray.name}  # never named: in flight
    gc.collect(now=newest + IN_FLIGHT_GRACE_S + 1)
    assert set(os.listdir(s.index_dir / SEGMENTS_DIR)) == live
    assert snapshot_rows(s.index_dir) == rows


def test_a_lease_of_a_process_that_is_gone_protects_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / READERS_DIR).mkdir(parents=True)
    gone = 2**22 + 12345  # above pid_max's default: no such process
    (state / READERS_DIR / f"{gone}-1.json").write_text(json.dumps({"pid": gone, "snapshots": [3]}))
    (state / READERS_DIR / f"{os.getpid()}-9.json").write_text(
        json.dumps({"pid": os.getpid(), "snapshots": [4]})
    )
    assert leased_snapshots(state) == {4}
    assert os.listdir(state / READERS_DIR) == [f"{os.getpid()}-9.json"]  # the dead one removed


def test_no_segment_keeps_more_dead_rows_than_the_share(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for i in range(30):
        write(vault, f"n{i}.md", note_text(i))
    s = make_settings(vault, tmp_path / "state")
    build_index(s)
    worst = 0.0
    for k in range(12):  # edits spread over the full build's segment
        write(vault, f"n{k}.md", note_text(k, "again"))
        m = build_index(s)
        worst = max(worst, *(len(x.deleted) / x.note_count for x in m.segments if x.note_count))
    assert worst <= compaction.TOMBSTONE_RATIO


def test_dead_rows_past_the_share_make_compaction_due_even_while_busy(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for i in range(10):
        write(vault, f"n{i}.md", note_text(i))
    m = build_index(make_settings(vault, tmp_path / "state"))
    assert not compaction.due_while_busy(m)  # one clean full-build segment: wait for a quiet moment
    seg = m.segments[0]
    share = int(seg.note_count * compaction.TOMBSTONE_RATIO) + 1
    heavy = seg.model_copy(update={"deleted": [f"n{i}.md" for i in range(share)]})
    assert compaction.due_while_busy(m.model_copy(update={"segments": [heavy]}))
