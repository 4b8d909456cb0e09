"""The periodic reconcile scan beside a writer that commits while it walks."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from engine_support import make_settings, note_text, snapshot_rows, write

from vault_agent.indexer.build import Indexer, build_index, open_writer_dirs
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.reconcile import HASH_PASS_EVERY, Reconciler


def _indexer(tmp_path: Path, notes: int) -> tuple[Indexer, WriterLock]:
    vault = tmp_path / "v"
    for i in range(notes):
        write(vault, f"d{i % 3}/n{i}.md", note_text(i))
    s = make_settings(vault)
    build_index(s)
    lock = WriterLock(s.index_dir)
    return open_writer_dirs(s, lock), lock


def _bump(vault: Path, rel: str, text: str, mtime_ns: int) -> None:
    (vault / rel).write_text(text, encoding="utf-8")
    os.utime(vault / rel, ns=(mtime_ns, mtime_ns))


def _commit_now(idx: Indexer, rel: str, op: str = "upsert") -> None:
    """What the writer's thread does for a watcher hint: log it, apply it, commit."""
    idx.log.append([NewEvent(op, rel, None, None, None, "watcher")])  # type: ignore[arg-type]
    idx.apply(idx.log.read_after(idx.applied_seq))


def _run_scan(idx: Indexer, during_walk: Sequence[Callable[[], object]], runs: int = 1) -> list[int]:
    """One reconcile scan; `during_walk` callables run (once each) at the walk's first pause,
    i.e. after the scan copied the known notes. Returns the seqs it logged."""
    appended: list[int] = []
    pending = list(during_walk)

    def wait_writer_idle(_timeout: float) -> None:
        while pending:
            pending.pop(0)()

    r = Reconciler(
        idx,
        3600,
        on_appended=appended.append,
        watcher_alive=lambda: True,
        on_watcher_dead=lambda: None,
        wait_writer_idle=wait_writer_idle,
    )
    r._runs = runs
    r._run()
    assert not pending, "the scan never paused"
    return appended


@pytest.mark.parametrize("hash_pass", [False, True])
def test_a_change_committed_during_the_walk_is_not_logged_again(tmp_path: Path, hash_pass: bool) -> None:
    idx, lock = _indexer(tmp_path, 12)
    try:
        vault = idx.vault.root
        head = idx.log.head_seq()
        # The writer commits an edit, a new note and a deletion after the scan copied the
        # notes it compares with: the disk and the index agree again when the walk sees them.
        steps = [
            lambda: _bump(vault, "d1/n4.md", note_text(4, "edited"), 1_900_000_000_000_000_000),
            lambda: _commit_now(idx, "d1/n4.md"),
            lambda: write(vault, "d1/new.md", "# New\n"),
            lambda: _commit_now(idx, "d1/new.md"),
            lambda: (vault / "d2/n2.md").unlink(),
            lambda: _commit_now(idx, "d2/n2.md", "delete"),
        ]
        seq_after_commits = head + 3
        appended = _run_scan(idx, steps, runs=HASH_PASS_EVERY if hash_pass else 1)
        if hash_pass:
            # A hash pass trusts no stat: it logs its differences (the build finds them unchanged).
            assert appended and idx.log.head_seq() > seq_after_commits
        else:
            assert appended == [] and idx.log.head_seq() == seq_after_commits
        idx.apply(idx.log.read_after(idx.applied_seq))
        full = make_settings(vault, tmp_path / "full")
        build_index(full, full=True)
        assert snapshot_rows(idx.index_dir) == snapshot_rows(full.index_dir)
    finally:
        lock.release()


def test_a_change_the_writer_has_not_committed_is_logged(tmp_path: Path) -> None:
    idx, lock = _indexer(tmp_path, 6)
    try:
        vault = idx.vault.root
        head = idx.log.head_seq()
        # Changed on disk during the walk but never committed (a lost watcher event), and a
        # note committed during the walk then changed again: both are real differences.
        steps = [
            lambda: _bump(vault, "d2/n5.md", note_text(5, "lost"), 1_900_000_000_000_000_000),
            lambda: _bump(vault, "d1/n1.md", note_text(1, "first"), 1_900_000_000_000_000_000),
            lambda: _commit_now(idx, "d1/n1.md"),
            lambda: _bump(vault, "d1/n1.md", note_text(1, "second and longer"), 1_900_000_000_100_000_000),
        ]
        appended = _run_scan(idx, steps)
        assert appended
        logged = {e.path for e in idx.log.read_after(head + 1)}
        assert logged == {"d2/n5.md", "d1/n1.md"}
    finally:
        lock.release()
