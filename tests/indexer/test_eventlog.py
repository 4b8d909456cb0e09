"""Event log: framing, torn tails at every byte, bit flips, concurrency, compaction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_support import PY

from vault_agent.indexer import eventlog
from vault_agent.indexer.eventlog import EventLog, NewEvent, Origin, scan_bytes


def _ev(i: int, origin: Origin = "watcher") -> NewEvent:
    return NewEvent("upsert", f"notes/n{i}.md", None, 1000 + i, 10 + i, origin)


def _fill(tmp_path: Path, n: int) -> EventLog:
    log = EventLog(tmp_path)
    for i in range(n):
        log.append([_ev(i)])
    return log


def test_append_read_head(tmp_path: Path) -> None:
    log = EventLog(tmp_path)
    assert log.head_seq() == 0 and log.read_after(0) == []
    assert log.append([_ev(1), _ev(2)]) == 2
    assert log.append([NewEvent("move", "a.md", "b.md", None, None, "tool")]) == 3
    events = log.read_after(0)
    assert [(e.seq, e.op, e.path, e.dest, e.origin) for e in events] == [
        (1, "upsert", "notes/n1.md", None, "watcher"),
        (2, "upsert", "notes/n2.md", None, "watcher"),
        (3, "move", "a.md", "b.md", "tool"),
    ]
    assert [e.seq for e in log.read_after(2)] == [3]
    assert log.head_seq() == 3
    # The cursor path and a fresh reader agree.
    assert [e.seq for e in EventLog(tmp_path).read_after(1)] == [2, 3]


def test_torn_tail_at_every_byte_offset(tmp_path: Path) -> None:
    log = _fill(tmp_path, 6)
    data = log.path.read_bytes()
    full = scan_bytes(data)
    assert [e.seq for e in full.events] == [1, 2, 3, 4, 5, 6]
    # offsets where frames end, found by scanning every prefix
    boundaries = sorted({scan_bytes(data[:k]).valid_end for k in range(len(data) + 1)})
    start = boundaries[-4]  # the last three records
    tested = 0
    for cut in range(start, len(data) + 1):
        log.path.write_bytes(data[:cut])
        valid = max(b for b in boundaries if b <= cut)
        expect = [e.seq for e in scan_bytes(data[:valid]).events]
        fresh = EventLog(tmp_path)
        assert [e.seq for e in fresh.read_after(0)] == expect
        assert fresh.head_seq() == (expect[-1] if expect else 0)
        removed = fresh.recover()
        assert removed == cut - valid
        assert len(log.path.read_bytes()) == valid
        assert fresh.append([_ev(99)]) == (expect[-1] if expect else 0) + 1
        tested += 1
    assert tested == len(data) - start + 1


def test_bit_flip_in_each_record_drops_only_from_there(tmp_path: Path) -> None:
    log = _fill(tmp_path, 5)
    data = log.path.read_bytes()
    boundaries = sorted({scan_bytes(data[:k]).valid_end for k in range(len(data) + 1)})
    # boundaries[0] = 0, [1] = end of header, then the end of each record
    for rec in range(5):
        lo, hi = boundaries[rec + 1], boundaries[rec + 2]
        for pos in (lo, lo + 5, (lo + hi) // 2, hi - 1):
            flipped = bytearray(data)
            flipped[pos] ^= 0x10
            log.path.write_bytes(bytes(flipped))
            fresh = EventLog(tmp_path)
            assert [e.seq for e in fresh.read_after(0)] == list(range(1, rec + 1))
            fresh.recover()
            assert log.path.read_bytes() == data[:lo]
            assert fresh.append([_ev(7)]) == rec + 1


def test_header_corruption_keeps_seq_above_floor(tmp_path: Path) -> None:
    log = _fill(tmp_path, 3)
    data = bytearray(log.path.read_bytes())
    data[2] ^= 0xFF  # magic of the header frame
    log.path.write_bytes(bytes(data))
    floored = EventLog(tmp_path, floor_seq=lambda: 3)
    assert floored.read_after(0) == []
    floored.recover()
    assert floored.head_seq() == 3
    assert floored.append([_ev(1)]) == 4


def test_cut_below_applied_restarts_above_floor(tmp_path: Path) -> None:
    log = _fill(tmp_path, 4)
    data = bytearray(log.path.read_bytes())
    boundaries = sorted({scan_bytes(bytes(data[:k])).valid_end for k in range(len(data) + 1)})
    data[boundaries[2] + 3] ^= 0x01  # corrupt record 2 → only record 1 survives
    log.path.write_bytes(bytes(data))
    floored = EventLog(tmp_path, floor_seq=lambda: 4)
    floored.recover()
    assert floored.head_seq() == 4 and floored.read_after(0) == []
    assert floored.append([_ev(5)]) == 5


def test_compaction_keeps_seq_monotonic(tmp_path: Path) -> None:
    log = _fill(tmp_path, 10)
    assert log.compact(7) == 3
    assert [e.seq for e in log.read_after(0)] == [8, 9, 10]
    assert log.compact(10) == 0
    assert log.read_after(0) == [] and log.head_seq() == 10
    assert log.append([_ev(1)]) == 11
    assert [e.seq for e in EventLog(tmp_path).read_after(0)] == [11]


def test_group_commit_is_one_batch(tmp_path: Path) -> None:
    log = EventLog(tmp_path)
    seq = log.append([_ev(i) for i in range(500)])
    assert seq == 500
    assert [e.seq for e in log.read_after(0)] == list(range(1, 501))


APPENDER = """
import sys
from pathlib import Path
from typing import Any
from vault_agent.indexer.eventlog import EventLog, NewEvent
log = EventLog(Path(sys.argv[1]))
tag = sys.argv[2]
for i in range(200):
    log.append([NewEvent("upsert", f"{tag}/{i}.md", None, None, None, "tool")])
"""


def test_appends_from_several_processes(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen([PY, "-c", APPENDER, str(tmp_path), f"p{k}"], stderr=subprocess.PIPE)
        for k in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    events = EventLog(tmp_path).read_after(0)
    assert [e.seq for e in events] == list(range(1, 601))
    assert sorted(e.path for e in events) == sorted(f"p{k}/{i}.md" for k in range(3) for i in range(200))
    assert sys.platform.startswith("linux")


def test_asking_again_for_the_same_records_reads_only_what_was_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer asks twice per commit for the records after the applied seq; the second
    ask is served from what the first one read, plus the frames appended since (a whole
    log rescan per commit held the GIL in `serve --watch`)."""
    log = EventLog(tmp_path)
    log.append([NewEvent("upsert", f"n{i}.md") for i in range(200)])
    full: list[int] = []
    real = eventlog.scan_bytes

    def counted(*args: Any) -> Any:
        """The real scan, counted."""
        full.append(1)
        return real(*args)

    monkeypatch.setattr(eventlog, "scan_bytes", counted)
    first = log.read_after(150)
    assert [e.seq for e in first] == list(range(151, 201)) and len(full) == 1
    log.append([NewEvent("upsert", "late.md")])
    again = log.read_after(150)
    assert [e.seq for e in again] == list(range(151, 202)) and len(full) == 1  # no rescan
    assert [e.seq for e in log.read_after(190)] == list(range(191, 202))
    assert [e.path for e in EventLog(tmp_path).read_after(150)] == [e.path for e in again]
