"""The watching writer: editor save patterns, bursts, and overflow all converge to disk."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import PY, current_manifest, disk_notes, make_settings, note_text, snapshot_rows, write
from testkit import wait_until

from vault_agent.config import Settings
from vault_agent.freshness import (
    StatChecker,
    compute_freshness,
    read_current_manifest,
    read_writer_state,
    snapshot_note_stats,
)
from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.lock import writer_lock_held


def _disk_stats(vault: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for rel in disk_notes(vault):
        st = (vault / rel).stat()
        out[rel] = (st.st_mtime_ns, st.st_size)
    return out


def _converged(s: Settings) -> bool:
    m = read_current_manifest(s.index_dir)
    return m is not None and snapshot_note_stats(s.index_dir, m) == _disk_stats(s.vault)


def _wait_fresh(s: Settings, timeout: float = 60.0) -> None:
    wait_until(lambda: _converged(s), timeout, "the snapshot to match the disk")
    wait_until(
        lambda: compute_freshness(s, current_manifest(s.index_dir), stat_checker=None) == "fresh",
        timeout,
        "fresh",
    )


def _same_as_full(s: Settings, tmp_path: Path, tag: str) -> None:
    full = make_settings(s.vault, tmp_path / f"full-{tag}")
    build_index(full, full=True)
    assert snapshot_rows(s.index_dir) == snapshot_rows(full.index_dir)


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[tuple[Writer, Settings]]:
    vault = tmp_path / "v"
    for i in range(10):
        write(vault, f"f{i % 2}/n{i}.md", note_text(i))
    s = make_settings(vault, debounce_ms=30)
    w = Writer(s)
    w.start()
    try:
        yield w, s
    finally:
        w.stop()


def test_edit_rename_delete_reach_fresh(watching: tuple[Writer, Settings], tmp_path: Path) -> None:
    w, s = watching
    _wait_fresh(s)
    write(s.vault, "f0/n0.md", note_text(0, "edited"))
    _wait_fresh(s)
    os.rename(s.vault / "f0" / "n2.md", s.vault / "f1" / "renamed.md")
    _wait_fresh(s)
    (s.vault / "f1" / "n3.md").unlink()
    _wait_fresh(s)
    os.rename(s.vault / "f1", s.vault / "g")  # a folder move
    _wait_fresh(s)
    _same_as_full(s, tmp_path, "a")
    state = read_writer_state(s.index_dir)
    assert state is not None and state.watching and state.watcher_ok and state.stale_reason is None


def test_atomic_and_vim_saves(watching: tuple[Writer, Settings], tmp_path: Path) -> None:
    w, s = watching
    _wait_fresh(s)
    # temp + rename (our own write tools' temp name, and a typical editor's)
    for tmp_name in (".vault-agent-tmp-0123456789abcdef0123456789abcdef", ".n1.md.tmp"):
        tmp = s.vault / "f1" / tmp_name
        tmp.write_text(note_text(1, tmp_name), encoding="utf-8")
        os.replace(tmp, s.vault / "f1" / "n1.md")
        _wait_fresh(s)
    # vim: probe file 4913, note → note~, write new note, delete the backup, plus a swap file
    d = s.vault / "f0"
    (d / ".n4.md.swp").write_bytes(b"\0swap")
    (d / "4913").write_text("")
    (d / "4913").unlink()
    os.rename(d / "n4.md", d / "n4.md~")
    (d / "n4.md").write_text(note_text(4, "vim"), encoding="utf-8")
    (d / "n4.md~").unlink()
    (d / ".n4.md.swp").unlink()
    _wait_fresh(s)
    # in-place truncate + write
    with open(d / "n6.md", "w", encoding="utf-8") as fh:
        fh.write(note_text(6, "in place"))
    _wait_fresh(s)
    _same_as_full(s, tmp_path, "b")
    notes = {r[0] for r in snapshot_rows(s.index_dir)["notes"]}
    assert not any("tmp" in p or p.endswith("~") or "4913" in p for p in notes)


def test_burst_of_5000_changes_loses_nothing(watching: tuple[Writer, Settings], tmp_path: Path) -> None:
    w, s = watching
    _wait_fresh(s)
    for i in range(5000):
        p = s.vault / f"burst{i % 10}" / f"b{i}.md"
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"# B{i}\n\nx {i}\n", encoding="utf-8")
    _wait_fresh(s, timeout=240)
    m = read_current_manifest(s.index_dir)
    assert m is not None and m.note_count == 5010
    _same_as_full(s, tmp_path, "c")


def test_tool_events_reach_a_snapshot(watching: tuple[Writer, Settings]) -> None:
    from vault_agent.indexer.tool_events import record_changes, wait_for_seq

    w, s = watching
    write(s.vault, "tool.md", "# Tool\n")
    seq = record_changes(s, [("upsert", "tool.md", None)], writer=w)
    sid = wait_for_seq(s, seq, 30, writer=w)
    assert sid is not None
    m = read_current_manifest(s.index_dir)
    assert m is not None and m.applied_seq >= seq and "tool.md" in snapshot_note_stats(s.index_dir, m)
    # Without the writer handle: appended to the log directly, picked up by the writer.
    os.rename(s.vault / "tool.md", s.vault / "tool2.md")
    seq2 = record_changes(s, [("move", "tool.md", "tool2.md")])
    assert seq2 > seq
    assert wait_for_seq(s, seq2, 30) is not None
    assert wait_for_seq(s, seq2 + 1000, 0.05) is None


WATCH_CHILD = """
import logging, sys
logging.basicConfig(level=logging.WARNING, format="%(name)s %(message)s")
from vault_agent.cli.main import run
sys.argv = ["vault-agent", "watch", "--vault", sys.argv[1]]
run()
"""


def _overflow(tmp_path: Path, n_files: int) -> None:
    vault = tmp_path / "v"
    for i in range(20):
        write(vault, f"seed/n{i}.md", note_text(i))
    s = make_settings(vault)
    env = dict(os.environ, VAULT_AGENT_DEBOUNCE_MS="30")
    proc = subprocess.Popen(
        [PY, "-c", WATCH_CHILD, str(vault)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env
    )
    try:
        wait_until(lambda: (read_writer_state(s.index_dir) or None) is not None, 60, "writer start")
        _wait_fresh(s)
        proc.send_signal(signal.SIGSTOP)
        for i in range(n_files):
            d = vault / f"flood{i % 50}"
            d.mkdir(exist_ok=True)
            (d / f"x{i}.md").write_text(f"# X{i}\n", encoding="utf-8")
        checker = StatChecker(s)
        wait_until(
            lambda: compute_freshness(s, current_manifest(s.index_dir), stat_checker=checker) == "stale",
            60,
            "stale while the writer is stopped",
        )
        proc.send_signal(signal.SIGCONT)
        seen: list[str] = []

        def fresh_and_right() -> bool:
            m = current_manifest(s.index_dir)
            state = compute_freshness(s, m, stat_checker=checker)
            seen.append(state)
            right = snapshot_note_stats(s.index_dir, m) == _disk_stats(vault)
            assert state != "fresh" or right, "reported fresh before converging"
            return state == "fresh" and right

        wait_until(fresh_and_right, 600, "convergence after the overflow")
        m = read_current_manifest(s.index_dir)
        assert m is not None and m.note_count == 20 + n_files
        assert "stale" in seen or "updating" in seen
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert str(tmp_path) not in err.decode()  # watchdog's own messages carry absolute paths


def test_overflow_converges_small(tmp_path: Path) -> None:
    _overflow(tmp_path, 8000)


@pytest.mark.slow
def test_overflow_converges_30000(tmp_path: Path) -> None:
    _overflow(tmp_path, 30000)


def test_periodic_reconcile_catches_what_the_watcher_never_saw(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for i in range(4):
        write(vault, f"n{i}.md", note_text(i))
    s = make_settings(vault)
    with Writer(s, watch=False, reconcile_interval_s=0.2):
        write(vault, "late.md", "# Late\n")
        (vault / "n0.md").unlink()
        _wait_fresh_no_watch(s)
    _same_as_full(s, tmp_path, "r")


def _wait_fresh_no_watch(s: Settings) -> None:
    wait_until(lambda: _converged(s), 60, "the reconcile scan to converge")


def test_close_releases_the_lock_and_is_idempotent(tmp_path: Path) -> None:
    s = make_settings(tmp_path / "v")
    Writer(s, watch=False).close()  # before start: nothing to stop
    w = Writer(s, watch=False)
    w.start()
    assert writer_lock_held(s.index_dir)
    w.close()
    w.close()
    assert not writer_lock_held(s.index_dir)
    with Writer(s, watch=False):  # another writer can take the lock at once
        assert writer_lock_held(s.index_dir)
