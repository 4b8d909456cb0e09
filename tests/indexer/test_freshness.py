"""Each state of the freshness machine is reached and reported (writer.json + stat scans)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from engine_support import current_manifest, make_settings, note_text, write
from testkit import wait_until

from vault_agent.contracts import HEARTBEAT_STALE_S, WriterState
from vault_agent.freshness import (
    StatChecker,
    compute_freshness,
    is_compatible,
    read_current_manifest,
    read_writer_state,
    writer_alive,
)
from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.eventlog import EventLog, NewEvent
from vault_agent.indexer.snapshot import atomic_write


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    for i in range(5):
        write(vault, f"n{i}.md", note_text(i))
    return vault


def _ws(**kw: object) -> WriterState:
    base = dict(
        pid=os.getpid(),
        started_at="2026-01-01T00:00:00Z",
        heartbeat_at=time.time(),
        phase="idle",
        log_head_seq=1,
        applied_seq=1,
        snapshot_id=1,
        watcher_ok=True,
        watching=True,
        stale_reason=None,
    )
    base.update(kw)
    return WriterState.model_validate(base)


def test_no_writer_stat_scan_fresh_stale_unknown(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault)
    m = build_index(s)
    assert read_writer_state(s.index_dir) is None
    assert compute_freshness(s, m, None, None) == "unknown"  # no scan possible
    checker = StatChecker(s)
    assert compute_freshness(s, m, None, checker) == "fresh"
    write(vault, "n0.md", note_text(0, "edit"))
    assert compute_freshness(s, m, None, checker) == "fresh"  # cached until recheck_seconds
    assert checker.check(m, force=True) == "stale"
    assert compute_freshness(s, m, None, checker) == "stale"
    m2 = build_index(s)
    assert compute_freshness(s, m2, None, checker) == "fresh"  # a new snapshot is scanned at once
    (vault / "n1.md").unlink()
    assert StatChecker(s).check(m2) == "stale"
    write(vault, "n1.md", note_text(1))
    os.utime(vault / "n1.md", ns=(1, 1))
    assert StatChecker(s).check(m2) == "stale"


def test_background_checker_answers_unknown_then_scans(tmp_path: Path) -> None:
    s = make_settings(_vault(tmp_path))
    m = build_index(s)
    checker = StatChecker(s, background=True)
    first = checker.check(m)
    assert first in ("unknown", "fresh")
    wait_until(lambda: checker.check(m) == "fresh", 30, "background scan")
    assert compute_freshness(s, m, None, checker) == "fresh"


def test_incompatible(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    m = build_index(make_settings(vault))
    other = make_settings(vault, exclude=["n1.md"])
    assert not is_compatible(other, m)
    assert compute_freshness(other, m, _ws(), StatChecker(other)) == "incompatible"
    bumped = m.model_copy(update={"schema_version": m.schema_version + 1})
    assert compute_freshness(make_settings(vault), bumped, None, None) == "incompatible"
    older_parser = m.model_copy(update={"parser_version": m.parser_version - 1})
    assert compute_freshness(make_settings(vault), older_parser, None, None) == "incompatible"


def test_writer_states_from_writer_json(tmp_path: Path) -> None:
    s = make_settings(_vault(tmp_path))
    m = build_index(s)
    assert m.applied_seq == 1
    assert compute_freshness(s, m, _ws(), None) == "fresh"
    assert compute_freshness(s, m, _ws(log_head_seq=3), None) == "pending"
    assert compute_freshness(s, m, _ws(phase="building", log_head_seq=3), None) == "updating"
    assert compute_freshness(s, m, _ws(stale_reason="overflow"), None) == "stale"
    assert compute_freshness(s, m, _ws(watcher_ok=False, stale_reason="watch-error"), None) == "stale"
    # missed time: alive but no heartbeat for several intervals
    assert compute_freshness(s, m, _ws(heartbeat_at=time.time() - 5), None) == "stale"
    # heartbeat lost → not a live writer → the stat checker decides (none given: unknown)
    gone = _ws(heartbeat_at=time.time() - HEARTBEAT_STALE_S - 1)
    assert not writer_alive(gone)
    assert compute_freshness(s, m, gone, None) == "unknown"
    assert compute_freshness(s, m, gone, StatChecker(s)) == "fresh"
    # a dead pid is no writer either
    dead = _ws(pid=2**22 + 12345)
    assert not writer_alive(dead)
    # published through writer.json, read by the default argument
    atomic_write(s.index_dir / "writer.json", _ws(log_head_seq=9).model_dump_json().encode())
    assert compute_freshness(s, m, stat_checker=None) == "pending"


def test_live_writer_reports_pending_updating_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault, debounce_ms=20)
    with Writer(s, watch=False) as w:

        def state() -> str:
            return compute_freshness(s, current_manifest(s.index_dir), stat_checker=None)

        wait_until(lambda: read_writer_state(s.index_dir) is not None, 10, "writer.json")
        # not watching and idle: the stat checker decides; with none given → unknown
        assert state() == "unknown"
        ws = read_writer_state(s.index_dir)
        assert ws is not None and ws.pid == os.getpid() and ws.phase == "idle" and not ws.watching
        # Events appended by another process and not yet applied → pending (head > applied).
        m = read_current_manifest(s.index_dir)
        assert m is not None
        write(vault, "n9.md", "# nine\n")
        seq = EventLog(s.index_dir).append([NewEvent("upsert", "n9.md", None, None, None, "tool")])
        pending = _ws(log_head_seq=seq, applied_seq=m.applied_seq, watching=False)
        assert compute_freshness(s, m, pending, None) == "pending"
        assert w.wait_for_seq(seq, 30) is not None
    assert read_writer_state(s.index_dir) is None  # removed on stop


def test_watching_writer_states(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault, debounce_ms=20)
    seen: set[str] = set()
    with Writer(s) as w:

        def state() -> str:
            st = compute_freshness(s, current_manifest(s.index_dir), stat_checker=None)
            seen.add(st)
            return st

        wait_until(lambda: state() == "fresh", 30, "fresh")
        # Simulated overflow: stale until the rescan it triggers has committed.
        w._faults.on_problem("overflow")
        wait_until(lambda: state() == "fresh", 30, "fresh after the rescan")
        assert read_writer_state(s.index_dir).stale_reason is None  # type: ignore[union-attr]
    assert "fresh" in seen
