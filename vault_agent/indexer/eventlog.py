"""Append-only, checksummed event log in `<index-dir>/events/events.log`.

Frame: magic `VAE1`, u32 payload length, u32 crc32(payload), payload (compact JSON),
u32 payload length again (so the tail can be read backwards). The first frame of a file
is a header `{"base_seq": N}`: every record in the file has seq > N, which keeps seq
monotonic across compaction. A torn or corrupt tail (crash mid-append, bit flip) ends the
valid prefix: readers stop there, and recovery cuts the file back to it — never an
exception. Appends from several processes are serialised by a flock on
`events/append.lock`; a batch is one write + one fsync (group commit).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, cast

from vault_agent.contracts import EVENTS_DIR, fsync_dir
from vault_agent.framing import FOOT, HEAD, MAX_PAYLOAD
from vault_agent.framing import frame as _frame
from vault_agent.framing import parse_frame_at as _parse_at
from vault_agent.private_dir import make_state_dirs

LOG_NAME = "events.log"
APPEND_LOCK = "append.lock"
# The framing lives in the kernel so conversation records share it (one implementation).
_HEAD, _FOOT = HEAD, FOOT

Op = Literal["upsert", "delete", "move", "rescan"]
Origin = Literal["watcher", "scan", "tool"]
OPS: frozenset[str] = frozenset({"upsert", "delete", "move", "rescan"})


@dataclass(frozen=True)
class NewEvent:
    """One change hint before the log has given it a seq; `path` is vault-relative ('' with
    `rescan` = the whole vault)."""

    op: Op
    path: str
    dest: str | None = None
    mtime_ns: int | None = None
    size: int | None = None
    origin: Origin = "scan"


@dataclass(frozen=True, kw_only=True)
class Event(NewEvent):
    """A logged change hint: the hint, its seq in the log and when it was appended."""

    seq: int
    ts: float


def _int(value: object) -> int:
    """A JSON number (or numeric string) as int; TypeError for anything else."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError("not a number")


def _float(value: object) -> float:
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError("not a number")


def _to_event(payload: dict[str, object]) -> Event | None:
    try:
        seq = _int(payload["seq"])
        op = str(payload["op"])
        if op not in OPS:
            return None
        return Event(
            seq=seq,
            ts=_float(payload.get("ts", 0.0)),
            op=cast(Op, op),
            path=str(payload.get("path", "")),
            dest=None if payload.get("dest") is None else str(payload["dest"]),
            mtime_ns=None if payload.get("mtime_ns") is None else _int(payload["mtime_ns"]),
            size=None if payload.get("size") is None else _int(payload["size"]),
            # Only this module writes the log (checksummed), so the origin is one of ours.
            origin=cast(Origin, str(payload.get("origin", "scan"))),
        )
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class ScanResult:
    base_seq: int
    events: list[Event]
    valid_end: int
    size: int


def scan_bytes(data: bytes, after_seq: int = -1) -> ScanResult:
    """Parse a whole log image; stops at the first invalid frame (the torn tail)."""
    view = memoryview(data)
    first = _parse_at(view, 0)
    if first is None or "base_seq" not in first[0]:
        return ScanResult(0, [], 0, len(data))
    base = _int(first[0]["base_seq"])
    off = first[1]
    events: list[Event] = []
    last = base
    while off < len(data):
        parsed = _parse_at(view, off)
        if parsed is None:
            break
        ev = _to_event(parsed[0])
        if ev is None or ev.seq <= last:
            break  # a frame that checks out but breaks monotonicity is corruption too
        last = ev.seq
        if ev.seq > after_seq:
            events.append(ev)
        off = parsed[1]
    return ScanResult(base, events, off, len(data))


def _write_all_or_nothing(fd: int, data: bytes, size: int) -> None:
    """Append `data` and fsync, or cut the file back to `size` and raise.

    A full disk can accept part of a batch (a short write) and refuse the rest: the part
    must not stay, or the log would grow by a torn frame on every retry and a caller could
    believe a half-written batch was recorded.

    Raises:
        OSError: the write or fsync failed (ENOSPC, EROFS, EIO, ...); nothing was added.
    """
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


class EventLog:
    """The event log of one state dir. `floor_seq` returns a seq the log must never go
    below (the committed snapshot's applied_seq), used if corruption reaches the header."""

    def __init__(self, index_dir: Path, floor_seq: Callable[[], int] | None = None) -> None:
        self.dir = Path(index_dir) / EVENTS_DIR
        self.path = self.dir / LOG_NAME
        self._floor = floor_seq or (lambda: 0)
        self._cursor: tuple[int, int, int] | None = None  # (inode, offset, seq at offset)
        # (seq, the records after it up to the cursor): the writer asks twice per commit for
        # the records after the applied seq, and the second ask would rescan the whole log
        # (up to LOG_COMPACT_BYTES of frames decoded in Python, holding the GIL: issue 32).
        self._recent: tuple[int, list[Event]] | None = None

    # ----- locking ---------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        make_state_dirs(self.dir, self.dir.parent)
        fd = os.open(self.dir / APPEND_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the flock

    # ----- reading ---------------------------------------------------------------------
    def _read_all(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""

    def _tail_seq(self, fd: int, size: int) -> int | None:
        """Seq of the last frame (or the header's base), read backwards; None if torn."""
        if size < _HEAD.size + _FOOT.size:
            return None
        (length,) = _FOOT.unpack(os.pread(fd, _FOOT.size, size - _FOOT.size))
        start = size - _FOOT.size - length - _HEAD.size
        if length > MAX_PAYLOAD or start < 0:
            return None
        parsed = _parse_at(os.pread(fd, size - start, start), 0)
        if parsed is None:
            return None
        payload = parsed[0]
        if "base_seq" in payload:
            return _int(payload["base_seq"])
        ev = _to_event(payload)
        return None if ev is None else ev.seq

    def head_seq(self) -> int:
        """Seq of the newest valid record (or the base after compaction); 0 when empty."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return self._floor_safe()
        try:
            size = os.fstat(fd).st_size
            tail = self._tail_seq(fd, size)
        finally:
            os.close(fd)
        if tail is not None:
            return tail
        res = scan_bytes(self._read_all())
        return max(res.events[-1].seq if res.events else res.base_seq, self._floor_safe())

    def read_after(self, seq: int) -> list[Event]:
        """Every valid record with seq > `seq`, in order (stops at a torn tail)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return []
        try:
            st = os.fstat(fd)
            start = 0
            known: list[Event] = []  # records after `seq` read before, up to the cursor
            if self._cursor and self._cursor[0] == st.st_ino and self._cursor[1] <= st.st_size:
                if self._cursor[2] <= seq:
                    start = self._cursor[1]
                elif self._recent is not None and self._recent[0] <= seq:
                    start, known = self._cursor[1], [e for e in self._recent[1] if e.seq > seq]
            if start == 0:
                data = os.pread(fd, st.st_size, 0)
                res = scan_bytes(data, seq)
                last = res.events[-1].seq if res.events else None
                if last is None:
                    return []
                self._cursor = (st.st_ino, res.valid_end, last)
                self._recent = (seq, res.events)
                return list(res.events)
            data = os.pread(fd, st.st_size - start, start)
        finally:
            os.close(fd)
        events: list[Event] = known
        assert self._cursor is not None  # start > 0 only when the cursor matched this file
        off, last, view = 0, self._cursor[2], memoryview(data)
        while off < len(data):
            parsed = _parse_at(view, off)
            if parsed is None:
                break
            ev = _to_event(parsed[0])
            if ev is None or ev.seq <= last:
                break
            last, off = ev.seq, parsed[1]
            if ev.seq > seq:
                events.append(ev)
        self._cursor = (st.st_ino, start + off, last)
        self._recent = (seq, events)
        return list(events)

    def _floor_safe(self) -> int:
        try:
            return int(self._floor())
        except Exception:
            return 0

    # ----- writing ---------------------------------------------------------------------
    def recover(self) -> int:
        """Cut a torn or corrupt tail back to the valid prefix; returns the bytes cut."""
        with self._locked():
            return self._recover_locked()[1]

    def _recover_locked(self) -> tuple[int, int]:
        """(head seq, bytes cut). Rewrites the header if corruption reached it."""
        data = self._read_all()
        res = scan_bytes(data)
        head = res.events[-1].seq if res.events else res.base_seq
        if res.valid_end == len(data) and data:
            return head, 0
        floor = self._floor_safe()
        if res.valid_end == 0 or head < floor:
            # Corruption reached the header or cut records the snapshot already applied:
            # restart the file above everything ever committed so seq stays monotonic.
            head = max(head, floor)
            self._write_new([], head)
            return head, len(data) - res.valid_end
        fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, res.valid_end)
            os.fsync(fd)
        finally:
            os.close(fd)
        self._cursor = None
        return head, len(data) - res.valid_end

    def _write_new(self, events: list[Event], base_seq: int) -> None:
        """Replace the log with a header + `events` (temp, fsync, rename, fsync dir)."""
        tmp = self.dir / f"{LOG_NAME}.tmp"
        blob = _frame({"base_seq": base_seq}) + b"".join(_frame(asdict(e)) for e in events)
        with open(tmp, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        fsync_dir(self.dir)
        self._cursor = None

    def append(self, items: list[NewEvent]) -> int:
        """Append a batch with one write + one fsync; returns the seq of its last record."""
        if not items:
            return self.head_seq()
        with self._locked():
            fd = -1
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            except FileNotFoundError:
                self._write_new([], self._floor_safe())
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            try:
                size = os.fstat(fd).st_size
                head = self._tail_seq(fd, size)
                if head is None:
                    os.close(fd)
                    fd = -1
                    head, _ = self._recover_locked()
                    fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
                now = time.time()
                frames = []
                for i, item in enumerate(items, start=1):
                    ev = Event(seq=head + i, ts=now, **asdict(item))
                    frames.append(_frame(asdict(ev)))
                _write_all_or_nothing(fd, b"".join(frames), size)
                return head + len(items)
            finally:
                if fd >= 0:
                    os.close(fd)

    def compact(self, applied_seq: int) -> int:
        """Drop records with seq <= applied_seq (all committed); returns records kept."""
        with self._locked():
            res = scan_bytes(self._read_all())
            head = res.events[-1].seq if res.events else res.base_seq
            keep = [e for e in res.events if e.seq > applied_seq]
            base = min(applied_seq, head) if keep else head
            base = max(base, res.base_seq)
            self._write_new(keep, base)
            return len(keep)

    def size_bytes(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0
