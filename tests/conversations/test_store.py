"""The record files: a crash (kill -9) mid-record loses nothing before the last line, a
torn tail is cut before the next append, a corrupt record is skipped with a warning."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit import wait_until

from vault_agent.conversations.hub import ConversationHub
from vault_agent.conversations.lines import CallLine, EndLine, MessageLine, StartLine
from vault_agent.conversations.store import ConversationStore
from vault_agent.conversations.tools import get_conversation
from vault_agent.errors import NotFound
from vault_agent.files.models import WriteObserver

WRITER = """
import sys
from vault_agent.conversations.lines import CallLine, StartLine
from vault_agent.conversations.store import ConversationStore
store = ConversationStore(sys.argv[1])
cid = sys.argv[2]
store.append(cid, [StartLine(at=1.0, client="crash", transport="stdio")])
n = 0
while True:
    store.append(cid, [CallLine(at=2.0, tool="vault_stat", paths=["a.md" + "x" * (n % 500)], outcome="OK", ms=n)])
    n += 1
"""


def test_kill_9_mid_record_loses_nothing_before_the_last_line(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    cid = store.new_id(1_900_000_000.0)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), cid])
    try:
        wait_until(lambda: store.size(cid) > 200_000, what="the writer to append")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    lines = store.read(cid)
    numbers = [int(line.ms) for line in lines[1:] if isinstance(line, CallLine)]
    assert numbers == list(range(len(lines) - 1)) and len(numbers) > 100
    # The next append (after any torn tail) is readable behind every line kept.
    store.append(cid, [EndLine(at=3.0, reason="user", title="t", summary="s", summary_source="digest")])
    after = store.read(cid)
    assert after[:-1] == lines and isinstance(after[-1], EndLine)


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(min_value=1, max_value=60))
def test_a_torn_tail_is_cut_before_the_next_append(
    tmp_path_factory: pytest.TempPathFactory, cut: int
) -> None:
    store = ConversationStore(tmp_path_factory.mktemp("torn"))
    cid = store.new_id(1_900_000_000.0)
    store.append(cid, [StartLine(at=1.0, client="c", transport="stdio")])
    store.append(cid, [_message(2.0, 1, "kept")])
    path = store.dir / f"{cid}.rec"
    whole = path.read_bytes()
    store.append(cid, [_message(3.0, 2, "torn")])
    torn = path.read_bytes()
    path.write_bytes(torn[: len(torn) - min(cut, len(torn) - len(whole))])  # a crash mid-line
    store.append(cid, [_message(4.0, 2, "next")])
    texts = [line.text if isinstance(line, MessageLine) else None for line in store.read(cid)]
    assert texts == [None, "kept", "next"]


def _message(at: float, seq: int, text: str) -> MessageLine:
    return MessageLine(at=at, seq=seq, text=text, priority="normal", expect_reply=False)


class _Ctx:
    def __init__(self, index_dir: Path) -> None:
        from vault_agent.config import load_settings

        self.settings = load_settings({"vault": index_dir.parent, "index_dir": index_dir}, env={})
        # the rest of conversations.hub.ConvContext: no hub, the system clock
        self.hub: ConversationHub | None = None
        self.conversation_clock: Callable[[], float] | None = None
        self.write_observer: WriteObserver | None = None


def test_a_corrupt_record_is_skipped_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    index_dir = tmp_path / "state"
    store = ConversationStore(index_dir)
    good = store.new_id(1_900_000_000.0)
    store.append(good, [StartLine(at=1_900_000_000.0, client="c", transport="stdio")])
    bad = store.new_id(1_900_000_100.0)
    (store.dir / f"{bad}.rec").write_bytes(b"\x00garbage that is no frame")
    ctx = _Ctx(index_dir)
    with caplog.at_level(logging.WARNING, logger="vault_agent.conversations"):
        listed = get_conversation(ctx, None, None, None).data
    assert [r.id for r in listed.conversations] == [good]  # type: ignore[union-attr]
    assert listed.total == 2  # type: ignore[union-attr]
    assert any("corrupt" in r.getMessage() for r in caplog.records)
    with pytest.raises(NotFound):
        get_conversation(ctx, bad, None, None)
