"""Record lines as typed models (issue 34 item 5): records written by main's code still read
to the same answers, today's writers write the same bytes, and every kind round-trips.

`records_from_main/` holds records written by main's code before the lines were typed
(its README says how), with what main's readers made of them (`expected.json`).
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from testkit import wait_until

from vault_agent.config import Settings, load_settings
from vault_agent.conversations import undo, undo_plan
from vault_agent.conversations.digest import digest, summary_of, touched_paths
from vault_agent.conversations.export import to_markdown
from vault_agent.conversations.hub import ConversationHub, bound
from vault_agent.conversations.lines import (
    AskLine,
    CallLine,
    EndLine,
    Line,
    MessageLine,
    OtherLine,
    ReplyLine,
    StartLine,
    UndoLine,
    UndoneFile,
    WriteLine,
    parse_line,
)
from vault_agent.conversations.liveness import close_orphans
from vault_agent.conversations.records import ConversationPage, UndoItem
from vault_agent.conversations.replies import reply_to_question
from vault_agent.conversations.store import ConversationStore
from vault_agent.conversations.tools import (
    end_by_user,
    end_conversation,
    get_conversation,
    observe_write,
    record_call,
    send_message,
)
from vault_agent.framing import frame

FROM_MAIN = Path(__file__).parent / "records_from_main"
EXPECTED: dict[str, Any] = json.loads((FROM_MAIN / "expected.json").read_text(encoding="utf-8"))
RECORD_IDS = sorted(k for k in EXPECTED if not k.startswith("_"))


@dataclasses.dataclass
class _Ctx:
    """conversations.hub.ConvContext over a state dir."""

    settings: Settings
    hub: ConversationHub | None = None
    conversation_clock: Callable[[], float] | None = None
    write_observer: Any = None


def _settings(tmp_path: Path) -> Settings:
    (tmp_path / "vault").mkdir(exist_ok=True)
    loaded = load_settings({"vault": tmp_path / "vault", "index_dir": tmp_path / "state"}, env={})
    return dataclasses.replace(
        loaded, conversations_record_queries=True, conversations_reply_timeout_seconds=30
    )


# ----------------------------------------------------------------------------- main's records read
@pytest.fixture
def main_records(tmp_path: Path) -> _Ctx:
    settings = _settings(tmp_path)
    folder = Path(settings.index_dir) / "conversations"
    folder.mkdir(parents=True)
    for rid in RECORD_IDS:
        shutil.copy(FROM_MAIN / f"{rid}.rec", folder / f"{rid}.rec")
    now = float(EXPECTED["_now"])
    return _Ctx(settings, conversation_clock=lambda: now)


@pytest.mark.parametrize("rid", RECORD_IDS)
def test_a_record_written_by_mains_code_reads_to_the_same_answers(main_records: _Ctx, rid: str) -> None:
    want = EXPECTED[rid]
    store = ConversationStore(main_records.settings.index_dir)
    lines = store.read(rid)
    assert [line.payload() for line in lines] == want["lines"]
    assert not any(isinstance(line, OtherLine) for line in lines)  # every kind main wrote is known
    # Read and written again, every line is the same bytes as the file.
    assert b"".join(frame(line.payload()) for line in lines) == (store.dir / f"{rid}.rec").read_bytes()
    now = float(EXPECTED["_now"])
    assert summary_of(rid, lines, now, 600.0).model_dump(mode="json") == want["summary"]
    page = get_conversation(main_records, rid, 500, None).data
    assert isinstance(page, ConversationPage)
    assert page.model_dump(mode="json") == want["page"]
    assert list(digest(lines)) == want["digest"]
    assert list(touched_paths(lines)) == want["touched"]
    assert to_markdown(page.conversation, page.entries) == want["markdown"]
    assert undo_plan.undone_marks(lines) == want["undone_marks"]
    writes = undo_plan.writes_per_file(lines)
    assert {p: [w.payload() for w in ws] for p, ws in writes.items()} == want["writes"]
    assert undo._not_undoable(lines, set(writes)) == want["not_undoable"]


def test_the_listing_of_mains_records_is_the_same(main_records: _Ctx) -> None:
    listed = get_conversation(main_records, None, 100, None).data
    assert listed.model_dump(mode="json") == EXPECTED["_list"]


# ----------------------------------------------------------------------------- today's writers
class _Clock:
    def __init__(self) -> None:
        self.t = 1_767_225_600.25  # as the generator's clock
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self.t += 1.5
            return self.t


class _Channel:
    def __init__(self, key: str, answer: tuple[str | None, str | None]) -> None:
        self.key, self.client, self.transport = key, "fixture-client", "stdio"
        self.answer = answer

    def notify(self, event: dict[str, Any]) -> bool:
        return True

    def ask(self, text: str, timeout_s: float) -> tuple[str | None, str | None]:
        return self.answer

    def sample(self, prompt: str, timeout_s: float) -> str | None:
        return None


def _run_generators_scenario(ctx: _Ctx, hub: ConversationHub, store: ConversationStore) -> None:
    """The generator's scenario (records_from_main/generator.py.txt), through today's writers."""
    a = _Channel("a", ("yes, go ahead", None))
    with bound(a):
        record_call(ctx, a, "vault_search", {"query": "lamp keeper", "relative_dir": "notes"}, "OK", 12.345)
        record_call(ctx, a, "vault_read", {"path": "notes/a.md"}, "NOT_FOUND", 1.0)
        observe_write(hub, "vault_create", "notes/new.md", None, b"new\n")
        observe_write(hub, "vault_edit", "notes/new.md", b"new\n", b"new\nmore\n")
        observe_write(hub, "vault_delete", "notes/old.md", b"old\n", None, ".trash/old.md")
        record_call(ctx, a, "vault_move", {"source": "x.md", "destination": "y.md"}, "OK", 3.0)
        record_call(ctx, a, "vault_delete", {"path": "notes/old.md"}, "OK", 2.0)
        send_message(ctx, "Started on the notes", "normal", False)
        send_message(ctx, "Shall I go on? ünïcode ✓", "high", True)
        a.answer = (None, "declined")
        send_message(ctx, "Really?", "normal", True)
        a.answer = (None, "unsupported")
        cid = hub.conversation_of(a)
        run_in = contextvars.copy_context()
        waiter = threading.Thread(
            target=run_in.run, args=(send_message, ctx, "Which folder?", "normal", True)
        )
        waiter.start()
        wait_until(lambda: any(isinstance(ln, AskLine) for ln in store.read(cid)), what="the question")
        reply_to_question(ctx, cid, "the inbox", None, "cli")
        waiter.join(30)
        plans = [
            undo_plan.FilePlan(UndoItem(path="notes/new.md", action="remove", status="planned"), b"x", None),
            undo_plan.FilePlan(
                UndoItem(path="notes/old.md", action="restore", status="planned"), None, b"old\n"
            ),
        ]
        undo._record(
            store, cid, "done", None, {"notes/new.md": "restored", "notes/old.md": "restored"}, plans
        )
        undo._record(
            store, cid, "rolled back", "'notes/new.md': changed", {"notes/new.md": "rolled back"}, plans[:1]
        )
        end_conversation(ctx, "Tidied the notes", "Created one note, deleted another.")
    hub.reply_timeout_s = 0.0
    b = _Channel("b", (None, "unsupported"))
    with bound(b):
        record_call(ctx, b, "vault_tree", {}, "OK", 0.5)
        send_message(ctx, "Anyone there?", "normal", True)
        cid_b = hub.conversation_of(b)
    end_by_user(ctx, cid_b)
    c = _Channel("c", (None, "unsupported"))
    with bound(c):
        observe_write(hub, "write_file", "c.md", b"1\n", b"2\n")
        hub.conversation_of(c)
        hub._open["c"].last -= 10_000
        record_call(ctx, c, "vault_stat", {"path": "c.md"}, "OK", 0.2)
    d = _Channel("d", (None, "unsupported"))
    with bound(d):
        send_message(ctx, "Before the crash", "normal", False)
    hub.owner.release()
    assert ctx.conversation_clock is not None
    close_orphans(store, ctx.conversation_clock)


def _comparable(payload: dict[str, Any]) -> str:
    """A line's frame, without what differs between two runs: the waiting process's token
    and undo's wall-clock time."""
    out = dict(payload)
    if out["t"] == "ask":
        out["owner"] = "-"
    if out["t"] == "undo":
        out["at"] = 0.0
    return frame(out).hex()


def test_todays_writers_write_the_bytes_mains_wrote(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    clock = _Clock()
    store = ConversationStore(settings.index_dir)
    hub = ConversationHub(store, idle_s=600.0, retention=100, reply_timeout_s=30.0, clock=clock)
    ctx = _Ctx(settings, hub, clock)
    _run_generators_scenario(ctx, hub, store)
    written = [[_comparable(line.payload()) for line in store.read(rid)] for rid in store.ids()]
    from_main = [[_comparable(line) for line in EXPECTED[rid]["lines"]] for rid in RECORD_IDS[:5]]
    assert written == from_main  # the sixth record is main's oldest format, no writer of today's


# ----------------------------------------------------------------------------- every kind round-trips
_text = st.text(max_size=30)
_at = st.floats(min_value=0, max_value=4e9, allow_nan=False, allow_infinity=False)
_sha = st.none() | st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
_seq = st.integers(min_value=1, max_value=10_000)
LINES: st.SearchStrategy[Line] = st.one_of(
    st.builds(StartLine, at=_at, client=_text, transport=_text),
    st.builds(
        CallLine,
        at=_at,
        tool=_text,
        paths=st.lists(_text, max_size=3),
        outcome=_text,
        ms=_at,
        query=st.none() | _text,
    ),
    st.builds(
        WriteLine,
        at=_at,
        tool=_text,
        path=_text,
        before_sha=_sha,
        after_sha=_sha,
        old=st.sampled_from(["backup", "none"]),
        trashed_to=st.none() | _text,
    ),
    st.builds(MessageLine, at=_at, seq=_seq, text=_text, priority=_text, expect_reply=st.booleans()),
    st.builds(AskLine, at=_at, seq=_seq, via=_text, until=_at, owner=_text),
    st.builds(
        ReplyLine, at=_at, seq=_seq, reply=st.none() | _text, reason=st.none() | _text, via=st.none() | _text
    ),
    st.builds(EndLine, at=_at, reason=_text, title=_text, summary=_text, summary_source=_text),
    st.builds(
        UndoLine,
        at=_at,
        outcome=st.none() | _text,
        files=st.integers(min_value=0, max_value=9)
        | st.lists(st.builds(UndoneFile, path=_text, action=_text, state=_text, sha=_sha), max_size=3),
        reason=st.none() | _text,
    ),
)


@given(line=LINES)
def test_every_kind_round_trips_through_its_frame(line: Line) -> None:
    data = frame(line.payload())
    back = parse_line(json.loads(data[12:-4]))  # the frame's JSON object (framing.py's layout)
    assert type(back) is type(line) and back == line
    assert frame(back.payload()) == data
    assert None not in [line.payload().get(key, 0) for key in getattr(line, "omit_when_none", ())]


@pytest.mark.parametrize(
    "data",
    [
        {"t": "sticker", "at": 1.0, "emoji": "x"},  # a kind a newer version writes
        {"t": "message", "at": 1.0, "seq": "3", "text": "x", "priority": "normal", "expect_reply": False},
        {"at": 1.0},  # no tag at all
    ],
)
def test_a_line_this_version_does_not_know_is_kept_as_it_is(data: dict[str, object]) -> None:
    line = parse_line(data)
    assert isinstance(line, OtherLine) and line.payload() == data and line.at == 1.0


def test_keys_a_newer_version_adds_ride_along() -> None:
    data = {"t": "call", "at": 1.0, "tool": "x", "paths": [], "outcome": "OK", "ms": 2.0, "tokens": 7}
    line = parse_line(data)
    assert isinstance(line, CallLine) and line.payload() == data
