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
from vault_agent.conversations.store import ConversationStore
from vault_agent.conversations.tools import get_conversation
from vault_agent.errors import NotFound
from vault_agent.files.models import WriteObserver

WRITER = """
import sys
from vault_agent.conversations.store import ConversationStore
store = ConversationStore(sys.argv[1])
cid = sys.argv[2]
store.append(cid, [{"t": "start", "at": 1.0, "client": "crash", "transport": "stdio"}])
n = 0
while True:
    store.append(cid, [{"t": "call", "at": 2.0, "tool": "vault_stat", "paths": ["a.md"], "outcome": "OK",
                        "ms": 1.0, "n": n, "pad": "x" * (n % 500)}])
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
    numbers = [line["n"] for line in lines[1:]]
    assert numbers == list(range(len(numbers))) and len(numbers) > 100
    # The next append (after any torn tail) is readable behind every line kept.
    store.append(
        cid,
        [{"t": "end", "at": 3.0, "reason": "user", "title": "t", "summary": "s", "summary_source": "digest"}],
    )
    after = store.read(cid)
    assert after[:-1] == lines and after[-1]["t"] == "end"


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(min_value=1, max_value=60))
def test_a_torn_tail_is_cut_before_the_next_append(
    tmp_path_factory: pytest.TempPathFactory, cut: int
) -> None:
    store = ConversationStore(tmp_path_factory.mktemp("torn"))
    cid = store.new_id(1_900_000_000.0)
    store.append(cid, [{"t": "start", "at": 1.0, "client": "c", "transport": "stdio"}])
    store.append(
        cid,
        [{"t": "message", "at": 2.0, "seq": 1, "text": "kept", "priority": "normal", "expect_reply": False}],
    )
    path = store.dir / f"{cid}.rec"
    whole = path.read_bytes()
    store.append(
        cid,
        [{"t": "message", "at": 3.0, "seq": 2, "text": "torn", "priority": "normal", "expect_reply": False}],
    )
    torn = path.read_bytes()
    path.write_bytes(torn[: len(torn) - min(cut, len(torn) - len(whole))])  # a crash mid-line
    store.append(
        cid,
        [{"t": "message", "at": 4.0, "seq": 2, "text": "next", "priority": "normal", "expect_reply": False}],
    )
    texts = [line.get("text") for line in store.read(cid)]
    assert texts == [None, "kept", "next"]


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
    store.append(good, [{"t": "start", "at": 1_900_000_000.0, "client": "c", "transport": "stdio"}])
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
