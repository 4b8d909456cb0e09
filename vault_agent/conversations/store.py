"""Conversation records on disk: `<index-dir>/conversations/<id>.rec` plus `<id>.old/`.

Each record is append-only and checksummed per line with the event log's framing, so a
crash loses at most the line being written; each line is parsed once, here, into its
model (`lines.py`), and written from one; a corrupt line ends what is read of that
record (the rest of the file is ignored with a warning) and a record whose first line is
corrupt is skipped with a warning, the others kept. `<id>.old/<sha256>` holds the bytes a
write replaced, so `undo` can put them back byte for byte. Retention deletes the oldest
records (ids sort by start time) beyond the configured count. The folder sits in the
state dir, which the indexer never indexes and every file tool refuses. Everything here is
private to the owner whatever the umask (`private_dir`): folders 0700, files 0600, so a
backup is never readable by more people than the note it came from.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from vault_agent.conversations.lines import Line, StartLine, parse_line
from vault_agent.errors import NotFound
from vault_agent.framing import FOOT, HEAD, frame, parse_frame_at, valid_frames
from vault_agent.private_dir import FILE_MODE, make_state_dirs

log = logging.getLogger("vault_agent.conversations")

DIR_NAME = "conversations"
_ID_RE = re.compile(r"^c\d{8}T\d{9}Z-[0-9a-f]{6}$")  # UTC start to the millisecond + random
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")


def iso(ts: float) -> str:
    """UTC ISO 8601 with seconds, the one time format of records."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def valid_id(cid: str) -> bool:
    return bool(_ID_RE.match(cid))


def _ms_of(cid: str) -> int:
    start = datetime.strptime(cid[1:16], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    return int(start.timestamp()) * 1000 + int(cid[16:19])


def _cut_torn_tail(fd: int) -> None:
    """Before appending, drop a torn last frame (a crash mid-append) so new lines stay readable."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    if size >= HEAD.size + FOOT.size:
        (length,) = FOOT.unpack(os.pread(fd, FOOT.size, size - FOOT.size))
        start = size - FOOT.size - length - HEAD.size
        if start >= 0 and parse_frame_at(os.pread(fd, size - start, start), 0) is not None:
            return
    _lines, end = valid_frames(os.pread(fd, size, 0))
    log.warning("conversation record: cut %d torn bytes before appending", size - end)
    os.ftruncate(fd, end)


class ConversationStore:
    """The records of one state dir; safe for several processes (appends take a flock)."""

    def __init__(self, index_dir: Path) -> None:
        self.dir = Path(index_dir) / DIR_NAME

    # ----- names -----------------------------------------------------------------------
    def new_id(self, now: float) -> str:
        """A new id that sorts after every existing one (retention deletes in id order)."""
        ms = int(now * 1000)
        ids = self.ids()
        if ids:
            ms = max(ms, _ms_of(ids[-1]) + 1)
        stamp = datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y%m%dT%H%M%S")
        return f"c{stamp}{ms % 1000:03d}Z-{secrets.token_hex(3)}"

    def _rec(self, cid: str) -> Path:
        if not valid_id(cid):
            raise NotFound("no conversation with that id; list them with get_conversation")
        return self.dir / f"{cid}.rec"

    def ids(self) -> list[str]:
        """Every record id, oldest first."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        return sorted(n[:-4] for n in names if n.endswith(".rec") and valid_id(n[:-4]))

    # ----- lines -----------------------------------------------------------------------
    def append(self, cid: str, lines: Iterable[Line]) -> int:
        """Append lines with one write and one fsync; returns the record's size after."""
        blob = b"".join(frame(line.payload()) for line in lines)
        with self._locked(cid) as fd:
            os.write(fd, blob)
            os.fsync(fd)
            return os.fstat(fd).st_size

    @contextlib.contextmanager
    def _locked(self, cid: str) -> Iterator[int]:
        """The record open for appending under its flock, a torn tail already cut."""
        path = self._rec(cid)
        make_state_dirs(self.dir, self.dir.parent)  # never an empty folder at a vanished vault's path
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _cut_torn_tail(fd)
            yield fd
        finally:
            os.close(fd)

    def append_once(self, cid: str, line: Line, same: Callable[[Line], bool]) -> Line:
        """Append `line` unless a line for which `same` holds is already there (checked
        under the record's lock, so two processes never both append); returns the line
        that stands: the earlier one, or `line`."""
        with self._locked(cid) as fd:
            size = os.fstat(fd).st_size
            found, _end = valid_frames(os.pread(fd, size, 0))
            earlier = next((old for old in map(parse_line, found) if same(old)), None)
            if earlier is not None:
                return earlier
            os.write(fd, frame(line.payload()))
            os.fsync(fd)
            return line

    def size(self, cid: str) -> int:
        try:
            return self._rec(cid).stat().st_size
        except FileNotFoundError:
            return 0

    def read(self, cid: str) -> list[Line]:
        """The valid lines of one record, parsed (the first is its `StartLine`).

        Raises:
            NotFound: no such record, or its first line is unreadable (skipped as corrupt).
        """
        path = self._rec(cid)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise NotFound("no conversation with that id; list them with get_conversation") from None
        frames, end = valid_frames(data)
        lines = [parse_line(payload) for payload in frames]
        if not lines or not isinstance(lines[0], StartLine):
            log.warning("conversation record skipped: corrupt from its first line (id %s)", cid)
            raise NotFound("that conversation's record is corrupt and was skipped")
        if end != len(data):
            log.warning(
                "conversation record %s: %d trailing bytes ignored (torn or corrupt)", cid, len(data) - end
            )
        return lines

    def read_many(self, cids: Iterable[str]) -> list[tuple[str, list[Line]]]:
        """Readable records among `cids`; corrupt ones are skipped (with a warning)."""
        out = []
        for cid in cids:
            with contextlib.suppress(NotFound):
                out.append((cid, self.read(cid)))
        return out

    # ----- old bytes -------------------------------------------------------------------
    def keep_old_bytes(self, cid: str, sha: str, data: bytes) -> None:
        """Store the bytes a write replaced (content-addressed, fsynced) for undo."""
        folder = self.dir / f"{cid}.old"
        make_state_dirs(folder, self.dir.parent)
        target = folder / sha
        if target.exists():
            return
        tmp = folder / f".{sha}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
        with open(fd, "wb") as fh:
            os.fchmod(fd, FILE_MODE)  # an older, looser temp file of the same name
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)

    def old_bytes(self, cid: str, sha: str) -> bytes | None:
        if not _SHA_RE.match(sha) or not valid_id(cid):
            return None
        try:
            return (self.dir / f"{cid}.old" / sha).read_bytes()
        except FileNotFoundError:
            return None

    # ----- retention -------------------------------------------------------------------
    def delete(self, cid: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._rec(cid).unlink()
        shutil.rmtree(self.dir / f"{cid}.old", ignore_errors=True)

    def prune(self, keep: int) -> list[str]:
        """Delete the oldest records beyond `keep`; returns the ids deleted."""
        ids = self.ids()
        doomed = ids[: max(0, len(ids) - keep)]
        for cid in doomed:
            self.delete(cid)
        if doomed:
            log.info("conversation retention deleted %d record(s)", len(doomed))
        return doomed
