"""Embeddings in the writer: after each commit, a worker process embeds what changed.

The writer (`serve --watch`, `mcp`, `watch`; `index --embed` in the foreground) owns one
`SemanticIndexer`. It hooks the `Indexer`'s commits (a `commit_hook.CommitHook`):
- `committed(manifest)`: every commit names the new target; a dispatcher thread plans the
  next job (embed_job.py: the next batch of a segment without a complete embedding file of
  the current model, smallest segments first so a fresh edit is not queued behind a full
  build; or the mapped twin of a complete file an older version wrote) and hands it to
  the worker process (worker.py, nice 10, model loaded there only; worker_client.py);
- `attach(segments)`: every commit carries the files the worker finished since (parts of
  a segment being embedded with `embedded_notes`, or its complete files replacing them),
  so under a stream of edits embeddings ride on the lexical commits instead of adding
  snapshots; `sync(indexer)` commits them by themselves when the writer is idle.
Files are written like every segment file (tmp/, fsync, rename) and only become part of a
snapshot when a commit names them, so a crash of the worker or the writer at any instant
leaves CURRENT on a complete snapshot (at worst with fewer embeddings, caught up after).

Supervision: a worker that dies is restarted with backoff (1 s doubling to 30 s), counted
in `restarts` and reported in `embedder.json` (progress.py) and `status --verbose`; a
segment that crashed it MAX_CRASHES_PER_SEGMENT times is left lexical (logged) so one bad
note cannot crash-loop it. A model that fails to load stops the embedder for good
(`model_failed`; search says SEMANTIC_UNAVAILABLE). An idle worker exits after IDLE_EXIT_S
and frees the model's memory; the next change starts it again (~2 s).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vault_agent.commit_hook import CommitHook
from vault_agent.contracts import SEGMENTS_DIR, Manifest, SegmentRef
from vault_agent.semantic.embed_job import EmbedJob
from vault_agent.semantic.encoder import active_model
from vault_agent.semantic.progress import EMBEDDER_STATE_FILE, EmbedderPhase, EmbedderState, semantic_state
from vault_agent.semantic.settings import embed_threads, semantic_enabled
from vault_agent.semantic.store import LEGACY_TABLES, TABLE, VECTORS, file_model, part_keys, part_number
from vault_agent.semantic.worker_client import WorkerDied, WorkerProcess
from vault_agent.supervise import Spawn, plain_thread

log = logging.getLogger("vault_agent.semantic")

EMBED_BATCH_PASSAGES = 64  # passages per encoder call (and between stop checks)
PUBLISH_PASSAGES = 512  # passages per job: each becomes a durable, visible file (a few seconds)
MAX_CACHE_FILES = 64  # embedding files offered to the worker as sources of unchanged vectors
# Below the queries' priority (CFS weight 110 against 1024: a runnable query gets ~90% of a
# shared core and preempts the worker on wake-up), yet not starved by a busy machine: at
# nice 19 the embeddings fell 12% behind under sustained editing at load 15, at nice 10
# 1.4%, with search p99 within 1.1-1.3x idle either way (bench_sustained.py --worker-nice).
WORKER_NICE = 10
IDLE_EXIT_S = 300.0  # an idle worker exits (frees the model); the next change restarts it
RESTART_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
MAX_CRASHES_PER_SEGMENT = 3
STOP_GRACE_S = 10.0  # for the batch in flight to finish; then the worker is killed
RATE_WINDOW_S = 60.0  # the rate behind the ETA: notes embedded over the last minute

__all__ = ["EMBED_BATCH_PASSAGES", "PUBLISH_PASSAGES", "SemanticIndexer"]


class _Indexer(Protocol):
    """What the embedder needs of `indexer.build.Indexer` (the writer's commit path)."""

    manifest: Manifest | None
    compatible: bool

    def commit_snapshot(
        self, segments: list[SegmentRef], applied_seq: int, skipped: dict[str, int] | None
    ) -> Manifest: ...


@dataclass
class _Ready:
    """Files the worker finished for one segment that no committed manifest names yet."""

    parts: dict[str, str] = field(default_factory=dict)  # part key → file name
    notes: int = 0  # notes the segment's parts cover with these
    complete: dict[str, str] | None = None  # TABLE/VECTORS → file names (supersedes parts)
    twin: tuple[str, str] | None = None  # (complete Parquet file, its mapped twin)
    seq: int = 0  # when it last changed (a commit that was offered it is done with it)

    def names(self) -> set[str]:
        out = set(self.parts.values()) | set((self.complete or {}).values())
        return out | ({self.twin[1]} if self.twin else set())


class SemanticIndexer(CommitHook):
    """The writer's embedder (see the module doc). Thread-safe public methods."""

    def __init__(
        self,
        index_dir: Path,
        wake: Callable[[], None] | None = None,
        *,
        command: str = "writer",
        nice: int = WORKER_NICE,
        threads: int | None = None,
        batch_passages: int = EMBED_BATCH_PASSAGES,
        publish_passages: int = PUBLISH_PASSAGES,
        spawn: Spawn = plain_thread,
    ) -> None:
        self.index_dir = Path(index_dir)
        self._spawn = (
            spawn  # starts the dispatcher thread: the writer's supervisor restarts it after a failure
        )
        self._wake = wake
        self.command = command
        self.nice = nice
        self.threads = threads
        self.batch_passages = batch_passages
        self.publish_passages = publish_passages
        # Called on the dispatcher thread between jobs, with the segment id and the files the
        # job finished (not yet committed): the next job waits for it to return (tests look
        # at the state between published batches from here).
        self.after_job: Callable[[int, dict[str, str]], None] | None = None
        self._cond = threading.Condition()
        self._target: Manifest | None = None
        self._ready: dict[int, _Ready] = {}
        self._running: int | None = None  # segment id of the job in flight
        self._failed: set[int] = set()  # segments left lexical (crashed the worker, or failed)
        self._crashes: collections.Counter[int] = collections.Counter()
        self._known: dict[str, None] = {}  # embedding files seen, oldest first (cache sources)
        self._seq = 0  # bumped by every finished job
        self._offered = 0  # `_seq` when `attach` last ran
        self._stopping = False
        self._publish_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._proc: WorkerProcess | None = None
        self._model: str | None = None
        self._phase: EmbedderPhase = "idle"
        self._rate: collections.deque[tuple[float, int]] = collections.deque()
        self.model_failed = False
        self.restarts = 0
        self.last_error: str | None = None
        self.passages_embedded = 0  # computed by the model (tests: unchanged notes never are)
        self.passages_reused = 0
        self.job_notes = 0  # notes done by the job in flight, not yet published

    # ----- lifecycle ---------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if not semantic_enabled() or active_model().kind is None or self._thread is not None:
            return  # turned off, or no model on this platform (search says why)
        self._stopping = False
        self._thread = self._spawn("embedder", self._run)
        self.publish_state()

    def stop(self) -> None:
        """Stop the dispatcher and the worker (after its batch in flight); idempotent."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            proc = self._proc
        if proc is not None:
            if self._phase == "starting":
                proc.kill()  # loading the model: nothing to finish, nothing to lose
            proc.close_input()
        if self._thread is not None:
            self._thread.join(timeout=STOP_GRACE_S)
            if self._thread.is_alive() and proc is not None:
                proc.kill()  # a worker that does not stop must not outlive its writer
            self._thread.join(timeout=30)
            self._thread = None
        with self._publish_lock, contextlib.suppress(FileNotFoundError):
            (self.index_dir / EMBEDDER_STATE_FILE).unlink()  # nothing computes them any more

    @property
    def worker_pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None else None

    # ----- commit hooks (writer thread) ----------------------------------------------
    def attach(self, segments: list[SegmentRef]) -> list[SegmentRef]:
        """`segments` with the finished files of their segments folded in."""
        with self._cond:
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
        with self._cond:
            self._target = manifest
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
            self._cond.notify_all()

    def sync(self, indexer: _Indexer) -> Manifest | None:
        """Commit finished files when no lexical commit carried them (writer idle), and
        make sure the worker follows the indexer's manifest. Returns the new manifest when
        it committed one."""
        if self._thread is None:
            return None
        manifest = indexer.manifest
        if manifest is None or not indexer.compatible:
            return None
        with self._cond:
            waiting = any(s.segment_id in self._ready for s in manifest.segments)
            if not waiting:
                if self._target is None or self._target.snapshot_id != manifest.snapshot_id:
                    self._target = manifest
                    self._cond.notify_all()
                return None
        segments = self.attach(manifest.segments)
        committed = indexer.commit_snapshot(segments, manifest.applied_seq, manifest.skipped)
        self.committed(committed)  # again, harmless, when the Indexer's hook already did
        return committed

    def settled(self) -> bool:
        """Nothing left: no job planned or running and nothing waiting for a commit (or
        the model cannot load)."""
        with self._cond:
            if self.model_failed:
                return True
            return self._running is None and not self._ready and self._plan_locked() is None

    # ----- in the foreground (`index --embed`) ------------------------------------------
    def run_to_completion(self, indexer: _Indexer, report: Callable[[int, int, float | None], None]) -> None:
        """Embed every live note of the indexer's snapshot now, committing each finished
        batch as it comes (Ctrl-C keeps what is committed). `report(embedded, live, eta_s)`
        is called after every encoder batch and at least every second. The caller installs
        this embedder as the indexer's commit hook."""
        woke = threading.Event()
        self._wake = woke.set
        self.start()
        if self._thread is None:
            return  # semantic search is off
        if indexer.manifest is not None:
            self.committed(indexer.manifest)
        try:
            while True:
                woke.wait(1.0)
                woke.clear()
                self.sync(indexer)
                self.publish_state()
                manifest = indexer.manifest
                if manifest is not None:
                    state = semantic_state(manifest, self.index_dir, load_model=False)
                    live = state.live_notes
                    embedded = min(live, state.embedded_notes + self.job_notes)
                    rate = self.notes_per_s()
                    report(embedded, live, (live - embedded) / rate if rate else None)
                if self.settled():
                    return
        finally:
            self.stop()

    # ----- state for readers -----------------------------------------------------------
    def notes_per_s(self) -> float | None:
        with self._cond:
            now = time.monotonic()
            while self._rate and now - self._rate[0][0] > RATE_WINDOW_S:
                self._rate.popleft()
            if len(self._rate) < 2:
                return None
            span = self._rate[-1][0] - self._rate[0][0]
            notes = sum(n for _, n in list(self._rate)[1:])
            return round(notes / span, 2) if span > 0 and notes else None

    def publish_state(self) -> None:
        """Write `embedder.json` (heartbeat, phase, rate; progress.py reads it). Never after
        `stop` began: a late heartbeat must not bring back the file `stop` removes."""
        with self._publish_lock:
            if self._thread is None or self._stopping:
                return
            self._write_state()

    def _write_state(self) -> None:
        state = EmbedderState(
            pid=os.getpid(),
            heartbeat_at=time.time(),
            command=self.command,
            phase=self._phase,
            worker_pid=self.worker_pid,
            model=self._model,
            restarts=self.restarts,
            last_error=self.last_error,
            notes_per_s=self.notes_per_s(),
        )
        # Replaced atomically, not durably: a heartbeat (like writer.json), rewritten every second.
        path = self.index_dir / EMBEDDER_STATE_FILE
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_bytes(state.model_dump_json().encode())
            os.replace(tmp, path)

    def _set_phase(self, phase: EmbedderPhase) -> None:
        if phase != self._phase:
            self._phase = phase
            self.publish_state()

    # ----- the dispatcher thread ---------------------------------------------------------
    def _plan_locked(self) -> EmbedJob | None:
        """The next job for the target manifest (smallest segments first), or None."""
        target = self._target
        if target is None or self.model_failed:
            return None
        model = self._model or active_model().model_id
        seg_dir = self.index_dir / SEGMENTS_DIR
        order = sorted(target.segments, key=lambda s: (s.note_count - len(s.deleted), -s.segment_id))
        for seg in order:
            sid = seg.segment_id
            ready = self._ready.get(sid)
            if sid in self._failed or sid == self._running or (ready is not None and ready.complete):
                continue
            if TABLE in seg.files and file_model(seg_dir / seg.files[TABLE]) == model:
                if VECTORS not in seg.files and (ready is None or ready.twin is None):
                    return EmbedJob(op="twin", segment=seg)
                continue
            keys = [k for k in part_keys(seg.files) if file_model(seg_dir / seg.files[k]) == model]
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
                budget=self.publish_passages,
                batch=self.batch_passages,
            )
        return None

    def _has_work(self) -> bool:
        return self._stopping or self._plan_locked() is not None

    def _run(self) -> None:
        """The dispatcher: plans, runs and supervises. An unexpected error of its own is
        logged (type only), counted like a worker crash and retried after the backoff:
        embeddings must not stop for good behind a healthy writer."""
        while not self._stopping and not self.model_failed:
            try:
                self._dispatch()
            except Exception as exc:  # noqa: BLE001 - the loop must outlive any one failure
                log.error("the embedder failed (%s); it restarts", type(exc).__name__)
                with self._cond:
                    self._running = None
                self._crashed(WorkerDied(type(exc).__name__), None)

    def _dispatch(self) -> None:
        try:
            while True:
                with self._cond:
                    idle_timeout = IDLE_EXIT_S if self._proc is not None else None
                    self._cond.wait_for(self._has_work, timeout=idle_timeout)
                    if self._stopping:
                        return
                    job = self._plan_locked()
                    if job is not None:
                        self._running = job.segment.segment_id
                if job is None:
                    self._stop_worker()  # idle long enough: free the model's memory
                    self._set_phase("idle")
                    continue
                try:
                    self._run_job(job)
                finally:
                    with self._cond:
                        self._running = None
                        self.job_notes = 0
                        idle = self._plan_locked() is None
                if self.model_failed:
                    return
                if idle:
                    self._set_phase("idle")
        finally:
            self._stop_worker()

    def _stop_worker(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop()

    def _ensure_worker(self) -> WorkerProcess | None:
        proc = self._proc
        if proc is not None and proc.returncode() is None:
            return proc
        if proc is not None:  # died between jobs (killed, out of memory)
            self._crashed(WorkerDied(f"exit {proc.returncode()}"), None)
            if self._stopping:
                return None
        self._set_phase("starting")
        threads = self.threads or embed_threads()
        proc = WorkerProcess(self.index_dir, nice=self.nice, threads=threads)
        with self._cond:
            self._proc = proc
        if self._stopping:
            proc.close_input()
        try:
            event = proc.next_event()
        except WorkerDied as exc:
            if not self._stopping:
                self._crashed(exc, None)
            return None
        if event.get("ev") == "model_failed":
            self.model_failed = True
            self.last_error = str(event.get("error"))  # the worker logged it (same stderr)
            self._set_phase("failed")
            self._stop_worker()
            return None
        self._model = str(event.get("model") or active_model().model_id)
        return proc

    def _run_job(self, job: EmbedJob) -> None:
        proc = self._ensure_worker()
        if proc is None:
            return
        sid = job.segment.segment_id
        self._set_phase("running")
        try:
            proc.send(job.model_dump(mode="json"))
            cancel_sent = False
            while True:
                event = proc.next_event()
                kind = event.get("ev")
                if kind == "batch":
                    self._on_batch(int(event.get("notes", 0)))
                    if not cancel_sent and self._gone(sid):
                        proc.send({"op": "cancel"})  # compacted away or deleted meanwhile
                        cancel_sent = True
                    continue
                if kind == "done":
                    self._on_done(job, event)
                elif kind == "failed":
                    log.error("embedding failed for one segment (%s); it stays lexical", event.get("error"))
                    with self._cond:
                        self._failed.add(sid)
                return
        except WorkerDied as exc:
            if not self._stopping:
                self._crashed(exc, sid)

    def _gone(self, sid: int) -> bool:
        with self._cond:
            target = self._target
            return target is not None and all(s.segment_id != sid for s in target.segments)

    def _on_batch(self, notes: int) -> None:
        with self._cond:
            self._rate.append((time.monotonic(), notes))
            self.job_notes += notes
        if self._wake is not None:
            self._wake()

    def _on_done(self, job: EmbedJob, event: dict[str, Any]) -> None:
        sid = job.segment.segment_id
        files = {str(k): str(v) for k, v in dict(event.get("files") or {}).items()}
        log.debug(
            "embedding job done: segment %d %s, %s passages computed, %s reused",
            sid,
            job.op,
            event.get("embedded"),
            event.get("reused"),
        )
        with self._cond:
            ready = self._ready.setdefault(sid, _Ready())
            if job.op == "twin":
                ready.twin = (job.segment.files[TABLE], files[VECTORS])
            elif event.get("complete"):
                ready.complete, ready.parts = files, {}
            else:
                ready.parts.update(files)
                ready.notes = int(event.get("notes", 0))
            self._seq += 1
            ready.seq = self._seq
            self.passages_embedded += int(event.get("embedded", 0))
            self.passages_reused += int(event.get("reused", 0))
            self._crashes.pop(sid, None)
            self._consecutive_crashes = 0
            self._cond.notify_all()
        if self._wake is not None:
            self._wake()
        if self.after_job is not None:
            self.after_job(sid, files)

    _consecutive_crashes = 0

    def _crashed(self, exc: WorkerDied, sid: int | None) -> None:
        """The worker died: count it, leave a segment that keeps crashing it, back off."""
        self._stop_worker()
        self.restarts += 1
        self.last_error = str(exc)
        with self._cond:
            if sid is not None:
                self._crashes[sid] += 1
                if self._crashes[sid] >= MAX_CRASHES_PER_SEGMENT:
                    self._failed.add(sid)
                    log.error(
                        "one segment crashed the embedding worker %d times; it stays lexical",
                        self._crashes[sid],
                    )
            delay = RESTART_BACKOFF_S[min(self._consecutive_crashes, len(RESTART_BACKOFF_S) - 1)]
            self._consecutive_crashes += 1
        log.warning("the embedding worker stopped unexpectedly (%s); restarting in %.0f s", exc, delay)
        self._set_phase("restarting")
        with self._cond:
            self._cond.wait_for(lambda: self._stopping, timeout=delay)


def _with_ready(seg: SegmentRef, ready: _Ready) -> SegmentRef:
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
