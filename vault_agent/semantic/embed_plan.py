"""What to embed next, and which finished files wait for a commit (embedder.py's plan).

`EmbedPlan` is plain state: the target manifest, the files the worker finished that no
commit names yet, the segments left lexical, and the embedding files seen (sources of
unchanged vectors). It has no lock of its own: `SemanticIndexer` calls it under its
condition, because a plan and the wait for work must change together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vault_agent.contracts import SEGMENTS_DIR, Manifest, SegmentRef
from vault_agent.semantic.store import LEGACY_TABLES, TABLE, VECTORS, file_model, part_keys, part_number
from vault_agent.semantic.worker_messages import EmbedJob, JobDone

MAX_CACHE_FILES = 64  # embedding files offered to the worker as sources of unchanged vectors

__all__ = ["MAX_CACHE_FILES", "EmbedPlan", "JobSize"]


@dataclass(frozen=True)
class JobSize:
    """How much one job embeds: `budget` passages per published file, `batch` per encoder call."""

    budget: int
    batch: int


@dataclass
class _ReadyFiles:
    """Files the worker finished for one segment that no committed manifest names yet."""

    parts: dict[str, str] = field(default_factory=dict)  # part key → file name
    notes: int = 0  # notes the segment's parts cover with these
    complete: dict[str, str] | None = None  # TABLE/VECTORS → file names (supersedes parts)
    twin: tuple[str, str] | None = None  # (complete Parquet file, its mapped twin)
    seq: int = 0  # when it last changed (a commit that was offered it is done with it)

    def names(self) -> set[str]:
        out = set(self.parts.values()) | set((self.complete or {}).values())
        return out | ({self.twin[1]} if self.twin else set())


class EmbedPlan:
    """The embedder's plan: jobs for the target manifest, finished files for commits."""

    def __init__(self, index_dir: Path) -> None:
        self._seg_dir = Path(index_dir) / SEGMENTS_DIR
        self.target: Manifest | None = None
        self.running: int | None = None  # segment id of the job in flight
        self._ready: dict[int, _ReadyFiles] = {}
        self._failed: set[int] = set()  # segments left lexical (crashed the worker, or failed)
        self._known: dict[str, None] = {}  # embedding files seen, oldest first (cache sources)
        self._seq = 0  # bumped by every finished job
        self._offered = 0  # `_seq` when `attach` last ran

    @property
    def waiting(self) -> bool:
        """Finished files wait for a commit."""
        return bool(self._ready)

    def waits_in(self, manifest: Manifest) -> bool:
        """Finished files wait for a commit of one of `manifest`'s segments."""
        return any(s.segment_id in self._ready for s in manifest.segments)

    def leave_lexical(self, segment_id: int) -> None:
        """Plan no more jobs for this segment (it failed, or kept crashing the worker)."""
        self._failed.add(segment_id)

    def gone(self, segment_id: int) -> bool:
        """The segment left the target (compacted away or deleted)."""
        target = self.target
        return target is not None and all(s.segment_id != segment_id for s in target.segments)

    def attach(self, segments: list[SegmentRef]) -> list[SegmentRef]:
        """`segments` with the finished files of their segments folded in."""
        self._offered = self._seq
        if not self._ready:
            return segments
        out = []
        for seg in segments:
            ready = self._ready.get(seg.segment_id)
            out.append(seg if ready is None else _with_ready(seg, ready))
        return out

    def committed(self, manifest: Manifest) -> None:
        """A commit landed: it is the new target; what `attach` offered it is done with
        (folded in, or no longer applicable: a segment compacted away, a replaced file)."""
        self.target = manifest
        live = {s.segment_id for s in manifest.segments}
        for sid in list(self._ready):
            if sid not in live or self._ready[sid].seq <= self._offered:
                for name in self._ready.pop(sid).names():  # a segment compacted away before
                    self._known.setdefault(name, None)  # its files were: still a vector source
        for seg in manifest.segments:
            complete = [VECTORS] if VECTORS in seg.files else [TABLE] if TABLE in seg.files else []
            for key in complete + part_keys(seg.files):  # the mapped twin rather than its Parquet
                name = seg.files[key]
                self._known.pop(name, None)
                self._known[name] = None  # newest last
        while len(self._known) > 4 * MAX_CACHE_FILES:
            del self._known[next(iter(self._known))]

    def next_job(self, model: str | None, size: JobSize) -> EmbedJob | None:
        """The next job for the target manifest (smallest segments first), or None. A
        segment whose embeddings `model` did not compute is embedded again."""
        target = self.target
        if target is None:
            return None
        order = sorted(target.segments, key=lambda s: (s.note_count - len(s.deleted), -s.segment_id))
        for seg in order:
            sid = seg.segment_id
            ready = self._ready.get(sid)
            if sid in self._failed or sid == self.running or (ready is not None and ready.complete):
                continue
            if TABLE in seg.files and file_model(self._seg_dir / seg.files[TABLE]) == model:
                if VECTORS not in seg.files and (ready is None or ready.twin is None):
                    return EmbedJob(op="twin", segment=seg)
                continue
            keys = [k for k in part_keys(seg.files) if file_model(self._seg_dir / seg.files[k]) == model]
            parts = [seg.files[k] for k in keys] + list((ready.parts if ready else {}).values())
            numbers = [part_number(k) or 0 for k in [*part_keys(seg.files), *(ready.parts if ready else {})]]
            ready_names = [n for r in self._ready.values() for n in r.names()]
            sources = list(dict.fromkeys([*parts, *reversed(ready_names), *reversed(self._known)]))
            return EmbedJob(
                op="embed",
                segment=seg,
                parts=parts,
                next_part=max(numbers, default=0) + 1,
                sources=sources[: MAX_CACHE_FILES + len(parts)],
                budget=size.budget,
                batch=size.batch,
            )
        return None

    def finished(self, job: EmbedJob, done: JobDone) -> None:
        """The worker published `done.files` for `job`: they wait for the next commit."""
        ready = self._ready.setdefault(job.segment.segment_id, _ReadyFiles())
        if job.op == "twin":
            ready.twin = (job.segment.files[TABLE], done.files[VECTORS])
        elif done.complete:
            ready.complete, ready.parts = dict(done.files), {}
        else:
            ready.parts.update(done.files)
            ready.notes = done.notes
        self._seq += 1
        ready.seq = self._seq


def _with_ready(seg: SegmentRef, ready: _ReadyFiles) -> SegmentRef:
    """A segment's ref with the worker's finished files: complete files replace its parts
    (and any older format's file); parts add to the earlier ones."""
    files = dict(seg.files)
    notes = seg.embedded_notes
    if ready.complete is not None:
        drop = {TABLE, VECTORS, *LEGACY_TABLES}
        files = {k: v for k, v in files.items() if k not in drop and part_number(k) is None}
        files.update(ready.complete)
        notes = 0
    else:
        if ready.parts:
            files.update(ready.parts)
            notes = max(notes, ready.notes)
        if ready.twin is not None and files.get(TABLE) == ready.twin[0]:
            files[VECTORS] = ready.twin[1]
    return seg.model_copy(update={"files": files, "embedded_notes": notes})
