"""Committing snapshots: manifest file, atomic CURRENT swap, ids, tmp clean-up and GC.

Commit protocol (a crash at any instant leaves CURRENT naming a complete snapshot):
1. every segment file is already fsynced and renamed into segments/ (segments.py);
2. the manifest is written to tmp/, fsynced, renamed to snapshots/manifest-<id>.json,
   and snapshots/ is fsynced;
3. CURRENT is replaced: temp file in the state dir, fsync, os.replace, fsync the dir.
GC deletes segment, manifest and `.base` text files (bases/, base_files.py) that no recent manifest names, only after they
have been unreferenced for a grace period, so a reader holding an older snapshot keeps
its files while it finishes. A reader needs a manifest file only while it parses it
(freshness.read_current_manifest reads CURRENT, then the manifest, once), so superseded
manifests get a twelfth of the segments' grace: under sustained edits they are the bulk of
the garbage (each lists every segment's tombstones), and their number is bounded by
GC_KEEP_MANIFESTS plus the commits of MANIFEST_GRACE_S instead of GC_GRACE_S.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

from vault_agent.contracts import (
    BASES_DIR,
    CURRENT_FILE,
    SEGMENTS_DIR,
    SNAPSHOTS_DIR,
    TMP_DIR,
    Manifest,
    base_text_name,
    fsync_dir,
)
from vault_agent.freshness import read_current_manifest
from vault_agent.private_dir import make_state_dirs

MANIFEST_RE = re.compile(r"^manifest-(\d+)\.json$")
# Every file a segment lists: its tables (Parquet) and its mapped embedding files (Arrow;
# semantic/store.py). Digits too: `embeddings_v2` files went uncollected without them.
SEGMENT_RE = re.compile(r"^seg-(\d+)\.[a-z0-9_]+\.(?:parquet|arrow)$")
BASE_TEXT_RE = re.compile(r"^[0-9a-f]{64}\.base$")  # contracts.base_text_name
GC_KEEP_MANIFESTS = 3
GC_GRACE_S = 120.0
MANIFEST_GRACE_SHARE = 1 / 12  # of the grace: 10 s by default
GC_INTERVAL_S = 10.0  # the writer collects at most this often

__all__ = ["GarbageCollector", "atomic_write", "clear_tmp", "commit", "manifest_name", "next_ids", "now_iso"]


def manifest_name(snapshot_id: int) -> str:
    return f"manifest-{snapshot_id}.json"


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` atomically: temp in the same dir, (fsync), os.replace, (fsync dir)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)


def clear_tmp(index_dir: Path) -> None:
    """Empty tmp/ (anything there at writer start-up is garbage of a crashed build)."""
    tmp = Path(index_dir) / TMP_DIR
    if tmp.exists():
        shutil.rmtree(tmp, ignore_errors=True)
    make_state_dirs(tmp, Path(index_dir))


def _ids_on_disk(index_dir: Path) -> tuple[int, int]:
    max_snap = max_seg = 0
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(Path(index_dir) / SNAPSHOTS_DIR):
            m = MANIFEST_RE.match(name)
            if m:
                max_snap = max(max_snap, int(m.group(1)))
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(Path(index_dir) / SEGMENTS_DIR):
            m = SEGMENT_RE.match(name)
            if m:
                max_seg = max(max_seg, int(m.group(1)))
    return max_snap, max_seg


def next_ids(index_dir: Path, current: Manifest | None) -> tuple[int, int]:
    """(next snapshot id, next segment id): above everything committed or left on disk."""
    max_snap, max_seg = _ids_on_disk(index_dir)
    if current is not None:
        max_snap = max(max_snap, current.snapshot_id)
        max_seg = max([max_seg, *(s.segment_id for s in current.segments)])
    return max_snap + 1, max_seg + 1


def commit(index_dir: Path, manifest: Manifest) -> None:
    """Publish a manifest whose segment files are durable: manifest file, then CURRENT."""
    index_dir = Path(index_dir)
    snap_dir = index_dir / SNAPSHOTS_DIR
    tmp_dir = index_dir / TMP_DIR
    make_state_dirs(snap_dir, index_dir)
    make_state_dirs(tmp_dir, index_dir)
    name = manifest_name(manifest.snapshot_id)
    tmp = tmp_dir / name
    with open(tmp, "wb") as fh:
        fh.write(manifest.model_dump_json(indent=1).encode())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, snap_dir / name)
    fsync_dir(snap_dir)
    atomic_write(index_dir / CURRENT_FILE, (name + "\n").encode())


class GarbageCollector:
    """Deletes unreferenced snapshot files after they stayed unreferenced for `grace_s`."""

    def __init__(self, index_dir: Path, keep: int = GC_KEEP_MANIFESTS, grace_s: float = GC_GRACE_S) -> None:
        self.index_dir = Path(index_dir)
        self.keep = keep
        self.grace_s = grace_s
        self._unreferenced_since: dict[str, float] = {}
        self._next_due = 0.0

    def collect_if_due(self, interval_s: float = GC_INTERVAL_S) -> list[str]:
        """`collect()` at most every `interval_s` (monotonic); [] when not yet due."""
        now = time.monotonic()
        if now < self._next_due:
            return []
        self._next_due = now + interval_s
        return self.collect()

    def collect(self, now: float | None = None) -> list[str]:
        """One GC pass; returns the names of the files it deleted.

        A file no kept manifest names may go when it has been unreferenced for the grace
        period: either this collector saw it unreferenced that long ago, or the oldest kept
        manifest (the first that could have dropped it) was committed that long ago — and
        the file itself is older than the grace period (protects a build in flight).
        """
        now = time.time() if now is None else now
        snap_dir = self.index_dir / SNAPSHOTS_DIR
        seg_dir = self.index_dir / SEGMENTS_DIR
        search_dir = self.index_dir / "search"
        current = read_current_manifest(self.index_dir)
        if current is None:
            return []
        try:
            manifests = sorted(
                (int(m.group(1)), n) for n in os.listdir(snap_dir) if (m := MANIFEST_RE.match(n))
            )
        except FileNotFoundError:
            return []
        committed = [(i, n) for i, n in manifests if i <= current.snapshot_id]
        kept = {n for _, n in committed[-self.keep :]} | {manifest_name(current.snapshot_id)}
        live_segments: set[str] = set()
        live_search: set[str] = set()  # full-text engine dirs under search/ (search_index.py)
        live_bases: set[str] = set()  # texts of `.base` files under bases/ (base_files.py)
        oldest_kept = now
        for name in kept:
            man = _read_manifest(self.index_dir, name)
            if man is None:
                if name == manifest_name(current.snapshot_id):
                    return []  # never collect when the live manifest cannot be read
                continue
            live_segments |= {f for ref in man.segments for f in ref.files.values()}
            live_bases |= {base_text_name(ref.sha256) for ref in man.bases if ref.sha256}
            if man.search_index:
                live_search.add(man.search_index)
            oldest_kept = min(oldest_kept, _created_ts(man.created_at, now))
        candidates: list[Path] = [snap_dir / n for _, n in manifests if n not in kept]
        with contextlib.suppress(FileNotFoundError):
            candidates += [
                seg_dir / n for n in os.listdir(seg_dir) if n not in live_segments and SEGMENT_RE.match(n)
            ]
        with contextlib.suppress(FileNotFoundError):
            bases_dir = self.index_dir / BASES_DIR
            candidates += [
                bases_dir / n for n in os.listdir(bases_dir) if n not in live_bases and BASE_TEXT_RE.match(n)
            ]
        with contextlib.suppress(FileNotFoundError):
            candidates += [
                search_dir / n
                for n in os.listdir(search_dir)
                if n.startswith("snap-") and n not in live_search
            ]
        deleted: list[str] = []
        seen = set()
        for path in candidates:
            key = f"{path.parent.name}/{path.name}"
            seen.add(key)
            first = self._unreferenced_since.setdefault(key, now)
            try:
                age = now - path.stat().st_mtime
            except FileNotFoundError:
                continue
            grace = self.grace_s * MANIFEST_GRACE_SHARE if path.parent == snap_dir else self.grace_s
            if age < grace or (now - first < grace and now - oldest_kept < grace):
                continue
            with contextlib.suppress(FileNotFoundError):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            deleted.append(path.name)
            self._unreferenced_since.pop(key, None)
        for key in list(self._unreferenced_since):
            if key not in seen:
                del self._unreferenced_since[key]
        return deleted


def _read_manifest(index_dir: Path, name: str) -> Manifest | None:
    try:
        return Manifest.model_validate_json((Path(index_dir) / SNAPSHOTS_DIR / name).read_bytes())
    except (OSError, ValueError):
        return None


def _created_ts(created_at: str, default: float) -> float:
    try:
        return datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return default
