"""Freshness of a committed snapshot, computable by any process (kernel; no indexer imports).

API (ARCHITECTURE.md "Freshness state machine"):
    read_current_manifest(index_dir) -> Manifest | None   the snapshot CURRENT names
    read_writer_state(index_dir) -> WriterState | None    writer.json, if any
    writer_alive(state) -> bool                           heartbeat recent and pid alive
    pid_alive(pid) -> bool                                the process exists
    is_compatible(settings, manifest) -> bool             schema/parser/config match
    StatChecker(settings, background=False)               stat scan vs the snapshot's notes
        .check(manifest, force=False) -> "fresh" | "stale" | "unknown"
    compute_freshness(settings, manifest, writer_state=<read>, stat_checker=<shared>) -> Freshness
    shared_stat_checker(settings) -> StatChecker         one background checker per process

The machine: incompatible if the manifest's schema_version / parser_version /
config_fingerprint differ from the running code and settings. A live writer that watches
decides: a stale reason (overflow, watch error) or a heartbeat later than
MISSED_HEARTBEATS intervals (missed time: a stopped or starved writer) → stale; a build running → updating;
log head past the snapshot's applied_seq → pending; otherwise fresh. Without a live,
watching writer the StatChecker decides: it walks the vault (at most every
`settings.recheck_seconds`, or now with force=True) and compares (path, mtime_ns, size)
with the snapshot's notes and `.base` files: equal → fresh, different → stale, no scan yet → unknown.
With `background=True` (servers) a due scan runs on a daemon thread and `check` answers
from the last finished scan, so a request never waits for a walk.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.config import Settings
from vault_agent.contracts import (
    BASE_EXTENSION,
    CURRENT_FILE,
    HEARTBEAT_INTERVAL_S,
    HEARTBEAT_STALE_S,
    PARSER_VERSION,
    SCHEMA_VERSION,
    SEGMENTS_DIR,
    SNAPSHOTS_DIR,
    WRITER_STATE_FILE,
    Freshness,
    Manifest,
    WriterState,
)
from vault_agent.errors import IndexIncompatible, IndexNotFound, VaultUnavailable
from vault_agent.paths import vault_for_settings

__all__ = [
    "StatChecker",
    "compute_freshness",
    "is_compatible",
    "pid_alive",
    "read_current_manifest",
    "read_writer_state",
    "shared_stat_checker",
    "missing_index_error",
    "snapshot_note_stats",
    "stale_reason",
    "vault_for_settings",
    "writer_alive",
]


def read_current_manifest(index_dir: Path) -> Manifest | None:
    """The manifest CURRENT names, or None when there is no (readable) snapshot."""
    try:
        name = (Path(index_dir) / CURRENT_FILE).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return None
    if not name or "/" in name or name.startswith("."):
        return None
    try:
        raw = (Path(index_dir) / SNAPSHOTS_DIR / name).read_bytes()
        return Manifest.model_validate_json(raw)
    except (OSError, ValueError):
        return None


def read_writer_state(index_dir: Path) -> WriterState | None:
    """The writer's last published state, or None when no writer has published one."""
    try:
        raw = (Path(index_dir) / WRITER_STATE_FILE).read_bytes()
        return WriterState.model_validate(json.loads(raw))
    except (OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (ours or another user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def writer_alive(state: WriterState | None, now: float | None = None) -> bool:
    """True when the heartbeat is recent and the writer's process still exists."""
    if state is None:
        return False
    now = time.time() if now is None else now
    return now - state.heartbeat_at <= HEARTBEAT_STALE_S and pid_alive(state.pid)


def is_compatible(settings: Settings, manifest: Manifest) -> bool:
    return (
        manifest.schema_version == SCHEMA_VERSION
        and manifest.parser_version == PARSER_VERSION
        and manifest.config_fingerprint == settings.index_fingerprint()
    )


# Both the server and `reindex` read config.toml, but a running server reads it once at
# start: after an edit and a reindex, "run reindex" would loop. Say what actually helps.
CONFIG_CHANGED_MESSAGE = (
    "the index was built with other index settings (extensions or exclude) than this process "
    "started with; if config.toml was edited while 'vault-agent serve' or 'mcp' was running, "
    "restart it so it reads the file; otherwise run 'vault-agent reindex' with the same settings"
)


def incompatible_error(settings: Settings, manifest: Manifest) -> IndexIncompatible:
    """The INDEX_INCOMPATIBLE error for a snapshot `is_compatible` refused, saying what to do."""
    if manifest.schema_version == SCHEMA_VERSION and manifest.parser_version == PARSER_VERSION:
        return IndexIncompatible(CONFIG_CHANGED_MESSAGE)
    return IndexIncompatible()


def snapshot_note_stats(index_dir: Path, manifest: Manifest) -> dict[str, tuple[int, int]]:
    """path → (mtime_ns, size) of every live note of a snapshot."""
    out: dict[str, tuple[int, int]] = {}
    for ref in manifest.segments:
        tbl = pq.read_table(
            Path(index_dir) / SEGMENTS_DIR / ref.files["notes"], columns=["path", "mtime_ns", "size"]
        )
        if ref.deleted and tbl.num_rows:
            keep = pc.invert(pc.is_in(tbl.column("path"), value_set=pa.array(ref.deleted, pa.string())))
            tbl = tbl.filter(keep)
        for p, m, s in zip(
            tbl.column("path").to_pylist(),
            tbl.column("mtime_ns").to_pylist(),
            tbl.column("size").to_pylist(),
            strict=True,
        ):
            out[p] = (m, s)
    return out


def _stat_key(path: str, mtime_ns: int, size: int) -> int:
    # Python's hash is stable within a process (the only place keys are compared); a
    # collision would need two 64-bit hashes to meet, and would at worst call one change fresh.
    return hash((path, mtime_ns, size))


def snapshot_stat_keys(index_dir: Path, manifest: Manifest) -> npt.NDArray[np.int64]:
    """Sorted `_stat_key` of every live note and `.base` file of a snapshot: what a stat scan
    compares with, 0.8 MB at 100k notes where the path → (mtime, size) dict it is built
    from takes ~30 MB."""
    stats = snapshot_note_stats(index_dir, manifest)
    stats.update({ref.path: (ref.mtime_ns, ref.size) for ref in manifest.bases})
    keys = np.fromiter((_stat_key(p, m, s) for p, (m, s) in stats.items()), np.int64, len(stats))
    keys.sort()
    return keys


def _all_known(batch: list[int], expected: npt.NDArray[np.int64]) -> bool:
    keys = np.asarray(batch, np.int64)
    at = np.searchsorted(expected, keys)
    return bool(
        np.all(at < len(expected)) and np.array_equal(expected[np.minimum(at, len(expected) - 1)], keys)
    )


class StatChecker:
    """Stat-scan freshness for processes that are not the (watching) writer."""

    def __init__(self, settings: Settings, *, background: bool = False) -> None:
        self.settings = settings
        self.background = background
        self._lock = threading.Lock()
        self._result: tuple[int, Freshness, float] | None = None  # (snapshot_id, state, finished at)
        self._known: tuple[int, npt.NDArray[np.int64]] | None = None  # snapshot id, stat keys
        self._thread: threading.Thread | None = None
        self.reason: str | None = None  # why the last scan said stale, when it knows (STALE_REASONS)

    def _scan(self, manifest: Manifest) -> Freshness:
        try:
            return self._scan_vault(manifest)
        except VaultUnavailable:
            # The folder is gone: the snapshot is not what is on disk, and never "fresh".
            with self._lock:
                self._result = (manifest.snapshot_id, "stale", time.monotonic())
                self.reason = "vault-missing"
            return "stale"

    def _scan_vault(self, manifest: Manifest) -> Freshness:
        with self._lock:
            known = self._known
        if known is None or known[0] != manifest.snapshot_id:
            known = (manifest.snapshot_id, snapshot_stat_keys(self.settings.index_dir, manifest))
            with self._lock:
                self._known = known
        expected = known[1]
        vault = vault_for_settings(self.settings)
        seen = 0
        state: Freshness = "fresh"
        batch: list[int] = []
        for entry in vault.walk(also=(BASE_EXTENSION,)):
            seen += 1
            batch.append(_stat_key(entry.rel, entry.mtime_ns, entry.size))
            if len(batch) == 4096:
                if not _all_known(batch, expected):
                    state = "stale"
                    break
                batch.clear()
        if state == "fresh" and batch and not _all_known(batch, expected):
            state = "stale"
        if state == "fresh" and seen != len(expected):
            state = "stale"
        with self._lock:
            self._result = (manifest.snapshot_id, state, time.monotonic())
            self.reason = None
        return state

    def _due(self, manifest: Manifest) -> bool:
        res = self._result
        return (
            res is None
            or res[0] != manifest.snapshot_id
            or time.monotonic() - res[2] >= self.settings.recheck_seconds
        )

    def _last(self, manifest: Manifest) -> Freshness:
        res = self._result
        return res[1] if res is not None and res[0] == manifest.snapshot_id else "unknown"

    def check(self, manifest: Manifest, force: bool = False) -> Freshness:
        """ "fresh" | "stale" | "unknown" for this snapshot (scans when due or forced)."""
        if not (force or self._due(manifest)):
            return self._last(manifest)
        if self.background and not force:
            with self._lock:
                running = self._thread is not None and self._thread.is_alive()
                if not running:
                    self._thread = threading.Thread(
                        target=self._safe_scan, args=(manifest,), name="vault-agent-statcheck", daemon=True
                    )
                    self._thread.start()
            return self._last(manifest)
        try:
            return self._scan(manifest)
        except OSError:
            return "unknown"

    def _safe_scan(self, manifest: Manifest) -> None:
        with contextlib.suppress(OSError):
            self._scan(manifest)


MISSED_HEARTBEATS = 3  # a heartbeat later than this many intervals means "missed time"
_READ: Any = object()
_shared_lock = threading.Lock()
_shared: dict[tuple[str, str, str], StatChecker] = {}


def shared_stat_checker(settings: Settings) -> StatChecker:
    """One background StatChecker per (vault, state dir, config) in this process."""
    key = (str(settings.vault), str(settings.index_dir), settings.index_fingerprint())
    with _shared_lock:
        checker = _shared.get(key)
        if checker is None:
            checker = _shared[key] = StatChecker(settings, background=True)
        return checker


def compute_freshness(
    settings: Settings,
    manifest: Manifest,
    writer_state: WriterState | None = _READ,
    stat_checker: StatChecker | None = _READ,
) -> Freshness:
    """The freshness state of `manifest` as seen from this process (see module doc).

    writer_state defaults to reading writer.json; stat_checker defaults to this process's
    shared background checker (pass None to get "unknown" instead of a scan).
    """
    if not is_compatible(settings, manifest):
        return "incompatible"
    if writer_state is _READ:
        writer_state = read_writer_state(settings.index_dir)
    if writer_alive(writer_state) and writer_state is not None:
        if writer_state.phase == "building":
            return "updating"
        if time.time() - writer_state.heartbeat_at > MISSED_HEARTBEATS * HEARTBEAT_INTERVAL_S:
            return "stale"  # missed time: the writer is alive but not running (stopped, starved)
        if writer_state.watching:
            if not writer_state.watcher_ok or writer_state.stale_reason:
                return "stale"
            if writer_state.log_head_seq > manifest.applied_seq:
                return "pending"
            return "fresh"
        if writer_state.log_head_seq > manifest.applied_seq:
            return "pending"
    if stat_checker is _READ:
        stat_checker = shared_stat_checker(settings)
    if stat_checker is None:
        return "unknown"
    return stat_checker.check(manifest)


def stale_reason(writer_state: WriterState | None, stat_checker: StatChecker | None) -> str | None:
    """Why the snapshot is stale, when known: the live writer's reason, else the stat scan's."""
    if writer_alive(writer_state) and writer_state is not None:
        return writer_state.stale_reason
    return stat_checker.reason if stat_checker is not None else None


def missing_index_error(settings: Settings) -> IndexNotFound | VaultUnavailable:
    """INDEX_NOT_FOUND saying what is happening: a live writer building the first snapshot
    (or rebuilding a deleted index folder) means "retry in a moment", not "run index"; a
    state dir inside a vault folder that is gone is VAULT_UNAVAILABLE (it went with it)."""
    if settings.index_dir_in_vault() is not None and not os.path.isdir(settings.vault):
        return VaultUnavailable(
            "the vault folder is missing (moved, deleted or not mounted), and the index inside it "
            "with it; answers resume when the folder is back"
        )
    state = read_writer_state(settings.index_dir)
    if not writer_alive(state) or state is None:
        return IndexNotFound()
    if state.stale_reason == "index-folder-deleted":
        return IndexNotFound(
            "the index folder was deleted; the running server is rebuilding the index; retry in a moment"
        )
    if state.phase == "building":
        return IndexNotFound(
            "no index snapshot exists yet; the running server is building the first one; retry in a moment"
        )
    return IndexNotFound(
        "no index snapshot exists yet; the server indexing this vault has not committed one "
        "(see its log); it retries by itself"
    )
