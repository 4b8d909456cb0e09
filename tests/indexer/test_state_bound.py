"""The state dir stays bounded: superseded manifests go after a short grace (a reader needs
one only while it parses it), segment files after the full grace, and no segment keeps more
dead rows than compaction's share."""

from __future__ import annotations

import os
from pathlib import Path

from engine_support import make_settings, note_text, snapshot_rows, write

from vault_agent.contracts import SEGMENTS_DIR, SNAPSHOTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer import compaction
from vault_agent.indexer.build import build_index
from vault_agent.indexer.snapshot import MANIFEST_GRACE_SHARE, GarbageCollector, manifest_name


def test_superseded_manifests_go_before_segment_files(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for i in range(6):
        write(vault, f"n{i}.md", note_text(i))
    s = make_settings(vault, tmp_path / "state")
    build_index(s)
    for k in range(5):
        write(vault, f"n{k}.md", note_text(k, f"edit {k}"))
        build_index(s)
    current = read_current_manifest(s.index_dir)
    assert current is not None
    rows = snapshot_rows(s.index_dir)
    segment_files = set(os.listdir(s.index_dir / SEGMENTS_DIR))
    gc = GarbageCollector(s.index_dir, keep=1, grace_s=120)
    newest = max(p.stat().st_mtime for p in (s.index_dir / SEGMENTS_DIR).iterdir())
    soon = newest + 120 * MANIFEST_GRACE_SHARE + 1  # past the manifests' grace only
    gc.collect(now=soon)
    assert os.listdir(s.index_dir / SNAPSHOTS_DIR) == [manifest_name(current.snapshot_id)]
    assert set(os.listdir(s.index_dir / SEGMENTS_DIR)) == segment_files  # readers may still use them
    gc.collect(now=soon + 120)
    live = {f for ref in current.segments for f in ref.files.values()}
    assert set(os.listdir(s.index_dir / SEGMENTS_DIR)) == live
    assert snapshot_rows(s.index_dir) == rows


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
