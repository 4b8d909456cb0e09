"""A write tool's change in the writer's own process: committed without the watcher's quiet
period, and the watcher's echo of it is not logged (nor committed) a second time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import make_settings, note_text, write

from vault_agent.config import Settings
from vault_agent.indexer import commit_loop
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.eventlog import EventLog
from vault_agent.indexer.tool_echo import ABSENT, ToolEchoes, disk_signature
from vault_agent.indexer.tool_events import record_changes, wait_for_seq
from vault_agent.paths import Vault

LONG_DEBOUNCE_MS = 120_000  # a quiet period no test waits out: only an expedited commit lands


@pytest.fixture
def slow_watcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Writer, Settings]]:
    monkeypatch.setattr(commit_loop, "MAX_DEBOUNCE_S", LONG_DEBOUNCE_MS / 1000)  # no forced settle either
    vault = tmp_path / "v"
    for i in range(4):
        write(vault, f"n{i}.md", note_text(i))
    s = make_settings(vault, debounce_ms=LONG_DEBOUNCE_MS)
    w = Writer(s, watch=False)  # hints come from the test only (the echo below), in order
    w.start()
    try:
        yield w, s
    finally:
        w.stop()


def _tool_write(w: Writer, s: Settings, rel: str, text: str) -> int:
    write(s.vault, rel, text)
    return record_changes(s, [("upsert", rel, None)], writer=w)


def test_a_tool_write_commits_without_waiting_for_quiet(slow_watcher: tuple[Writer, Settings]) -> None:
    w, s = slow_watcher
    seq = _tool_write(w, s, "n1.md", note_text(1, "tool edit"))
    assert wait_for_seq(s, seq, 30, writer=w) is not None  # the quiet period alone is 120 s
    seq2 = _tool_write(w, s, "new.md", "# New\n")
    assert wait_for_seq(s, seq2, 30, writer=w) is not None


def test_the_watchers_echo_of_a_tool_write_is_not_logged(slow_watcher: tuple[Writer, Settings]) -> None:
    w, s = slow_watcher
    seq = _tool_write(w, s, "n2.md", note_text(2, "tool edit"))
    assert wait_for_seq(s, seq, 30, writer=w) is not None
    w._on_hint("n2.md", False)  # the echo, as the watcher reports it (maybe after the commit)
    seq2 = _tool_write(w, s, "n3.md", note_text(3, "tool edit"))
    assert wait_for_seq(s, seq2, 30, writer=w) is not None
    logged = [(e.origin, e.path) for e in EventLog(s.index_dir).read_after(0)]
    assert ("watcher", "n2.md") not in logged
    assert ("tool", "n2.md") in logged and ("tool", "n3.md") in logged


def test_echoes_are_redundant_only_while_the_disk_is_unchanged(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n")
    write(vault, "b.md", "# B\n")
    echoes = ToolEchoes(Vault(vault))
    echoes.expect(["a.md", "b.md", "gone.md"])
    assert echoes.redundant("a.md") and echoes.redundant("b.md")
    assert echoes.redundant("gone.md")  # absent then, absent now
    assert not echoes.redundant("other.md")  # never expected
    write(vault, "a.md", "# A edited after the tool\n")
    assert not echoes.redundant("a.md")
    before = os.stat(vault / "b.md")
    (vault / "b.md").write_text("# C\n", encoding="utf-8")  # same size, new content
    os.utime(vault / "b.md", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not echoes.redundant("b.md")  # the content hash tells
    write(vault, "gone.md", "# Now here\n")
    assert not echoes.redundant("gone.md")
    assert disk_signature(Vault(vault), "missing/deeper.md") == ABSENT
    assert disk_signature(Vault(vault), "") is None  # the root: not a note, never redundant


def test_echoes_expire(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n")
    echoes = ToolEchoes(Vault(vault), ttl_s=0.0)
    echoes.expect(["a.md"])
    assert not echoes.redundant("a.md")
