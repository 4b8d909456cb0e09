"""Embeddings in the writer: after each commit, a worker process embeds what changed.

The writer (`serve --watch`, `mcp`, `watch`; `index --embed` in the foreground) owns one
`SemanticIndexer`. It hooks the `Indexer`'s commits (a `commit_hook.CommitHook`):
- `committed(manifest)`: every commit names the new target; a dispatcher thread plans the
  next job (embed_plan.py: the next batch of a segment without a complete embedding file
  of the current model, smallest segments first so a fresh edit is not queued behind a
  full build; or the mapped twin of a complete file an older version wrote) and hands it
  to the worker process (worker.py, nice 10, model loaded there only; worker_client.py);
- `attach(segments)`: every commit carries the files the worker finished since (parts of
  a segment being embedded with `embedded_notes`, or its complete files replacing them),
  so under a stream of edits embeddings ride on the lexical commits instead of adding
  snapshots; `sync(indexer)` commits them by themselves when the writer is idle.
Files are written like every segment file (tmp/, fsync, rename) and only become part of a
snapshot when a commit names them, so a crash of the worker or the writer at any instant
leaves CURRENT on a complete snapshot (at worst with fewer embeddings, caught up after).

It is composed of three parts, each with one job: `EmbedPlan` (what to embed next, and
which finished files wait for a commit), `WorkerSupervisor` (worker_supervisor.py: starts,
restarts with backoff, leaves a segment that keeps crashing it lexical, stops) and
`EmbedderStatus` (embedder_status.py: phase, counters and rate in `embedder.json`). This
class holds the lock they change under and runs the dispatcher thread that joins them.
An idle worker exits after IDLE_EXIT_S and frees the model's memory; the next change
starts it again (~2 s).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vault_agent.commit_hook import CommitHook
from vault_agent.contracts import Manifest, SegmentRef
from vault_agent.semantic.embed_plan import EmbedPlan, JobSize
from vault_agent.semantic.embedder_status import EmbedderStatus
from vault_agent.semantic.encoder import active_model
from vault_agent.semantic.progress import semantic_state
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.worker_client import WorkerDied
from vault_agent.semantic.worker_messages import BatchDone, CancelJob, EmbedJob, JobDone, JobFailed
from vault_agent.semantic.worker_supervisor import WorkerSupervisor
from vault_agent.supervise import Spawn, plain_thread

log = logging.getLogger("vault_agent.semantic")

EMBED_BATCH_PASSAGES = 64  # passages per encoder call (and between stop checks)
PUBLISH_PASSAGES = 512  # passages per job: each becomes a durable, visible file (a few seconds)
# Below the queries' priority (CFS weight 110 against 1024: a runnable query gets ~90% of a
# shared core and preempts the worker on wake-up), yet not starved by a busy machine: at
# nice 19 the embeddings fell 12% behind under sustained editing at load 15, at nice 10
# 1.4%, with search p99 within 1.1-1.3x idle either way (bench_sustained.py --worker-nice).
WORKER_NICE = 10
IDLE_EXIT_S = 300.0  # an idle worker exits (frees the model); the next change restarts it
STOP_GRACE_S = 10.0  # for the batch in flight to finish; then the worker is killed

__all__ = [
    "EMBED_BATCH_PASSAGES",
    "PUBLISH_PASSAGES",
    "EmbedderOptions",
    "SemanticIndexer",
    "embed_to_completion",
]


class _Indexer(Protocol):
    """What the embedder needs of `indexer.build.Indexer` (the writer's commit path)."""

    manifest: Manifest | None
    compatible: bool

    def commit_snapshot(
        self, segments: list[SegmentRef], applied_seq: int, skipped: dict[str, int] | None
    ) -> Manifest: ...


@dataclass(frozen=True)
class EmbedderOptions:
    """How one embedder runs: who it reports as, and its worker's priority and threads."""

    command: str = "writer"  # `embedder.json`'s command (`index --embed` in the foreground)
    nice: int = WORKER_NICE
    threads: int | None = None  # None: the environment's (settings.embed_threads)


class SemanticIndexer(CommitHook):
    """The writer's embedder (see the module doc). Thread-safe public methods."""

    def __init__(
        self,
        index_dir: Path,
        wake: Callable[[], None] | None = None,
        *,
        options: EmbedderOptions = EmbedderOptions(),
        spawn: Spawn = plain_thread,
    ) -> None:
        self.index_dir = Path(index_dir)
        # starts the dispatcher thread: the writer's supervisor restarts it after a failure
        self._spawn = spawn
        self.wake = wake  # called after each batch and finished job (the writer commits them)
        # Read per job, so a test may shrink them to see several jobs on a small vault.
        self.batch_passages = EMBED_BATCH_PASSAGES
        self.publish_passages = PUBLISH_PASSAGES
        # Called on the dispatcher thread between jobs, with the segment id and the files the
        # job finished (not yet committed): the next job waits for it to return (tests look
        # at the state between published batches from here).
        self.after_job: Callable[[int, dict[str, str]], None] | None = None
        self._cond = threading.Condition()  # guards the plan; signalled when work may be there
        self._plan = EmbedPlan(self.index_dir)
        self._stopping = False
        self._publish_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.status = EmbedderStatus(self.index_dir, options.command, on_phase=self.publish_state)
        self.worker = WorkerSupervisor(
            self.index_dir, self.status, self._leave_lexical, nice=options.nice, threads=options.threads
        )

    # What tests and `status` read of the parts, under the names they always had.
    @property
    def model_failed(self) -> bool:
        return self.worker.model_failed

    @property
    def restarts(self) -> int:
        return self.status.restarts

    @property
    def last_error(self) -> str | None:
        return self.status.last_error

    @property
    def passages_embedded(self) -> int:
        return self.status.passages_embedded

    @property
    def passages_reused(self) -> int:
        return self.status.passages_reused

    @property
    def worker_pid(self) -> int | None:
        return self.worker.worker_pid

    # ----- lifecycle ---------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if not semantic_enabled() or active_model().kind is None or self._thread is not None:
            return  # turned off, or no model on this platform (search says why)
        self._stopping = False
        self.worker.begin()
        self._thread = self._spawn("embedder", self._run)
        self.publish_state()

    def stop(self) -> None:
        """Stop the dispatcher and the worker (after its batch in flight); idempotent."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self.worker.request_stop()
        if self._thread is not None:
            self._thread.join(timeout=STOP_GRACE_S)
            if self._thread.is_alive():
                self.worker.kill()  # a worker that does not stop must not outlive its writer
            self._thread.join(timeout=30)
            self._thread = None
        with self._publish_lock:
            self.status.remove()

    # ----- commit hooks (writer thread) ----------------------------------------------
    def attach(self, segments: list[SegmentRef]) -> list[SegmentRef]:
        """`segments` with the finished files of their segments folded in."""
        with self._cond:
            return self._plan.attach(segments)

    def committed(self, manifest: Manifest) -> None:
        """A commit landed: it is the new target (see `EmbedPlan.committed`)."""
        with self._cond:
            self._plan.committed(manifest)
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
            if not self._plan.waits_in(manifest):
                target = self._plan.target
                if target is None or target.snapshot_id != manifest.snapshot_id:
                    self._plan.target = manifest
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
            return self._plan.running is None and not self._plan.waiting and self._next_job_locked() is None

    # ----- state for readers -----------------------------------------------------------
    def publish_state(self) -> None:
        """Write `embedder.json` (heartbeat, phase, rate; progress.py reads it). Never after
        `stop` began: a late heartbeat must not bring back the file `stop` removes."""
        with self._publish_lock:
            if self._thread is None or self._stopping:
                return
            self.status.write(self.worker_pid)

    # ----- the dispatcher thread ---------------------------------------------------------
    def _next_job_locked(self) -> EmbedJob | None:
        if self.model_failed:
            return None
        model = self.status.model or active_model().model_id
        return self._plan.next_job(model, JobSize(budget=self.publish_passages, batch=self.batch_passages))

    def _has_work(self) -> bool:
        return self._stopping or self._next_job_locked() is not None

    def _leave_lexical(self, segment_id: int) -> None:
        with self._cond:
            self._plan.leave_lexical(segment_id)

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
                    self._plan.running = None
                self.worker.crashed(WorkerDied(type(exc).__name__), None)

    def _dispatch(self) -> None:
        try:
            while True:
                with self._cond:
                    idle_timeout = IDLE_EXIT_S if self.worker.has_worker else None
                    self._cond.wait_for(self._has_work, timeout=idle_timeout)
                    if self._stopping:
                        return
                    job = self._next_job_locked()
                    if job is not None:
                        self._plan.running = job.segment.segment_id
                if job is None:
                    self.worker.stop_worker()  # idle long enough: free the model's memory
                    self.status.set_phase("idle")
                    continue
                try:
                    self._run_job(job)
                finally:
                    with self._cond:
                        self._plan.running = None
                        self.status.job_ended()
                        idle = self._next_job_locked() is None
                if self.model_failed:
                    return
                if idle:
                    self.status.set_phase("idle")
        finally:
            self.worker.stop_worker()

    def _run_job(self, job: EmbedJob) -> None:
        proc = self.worker.ensure()
        if proc is None:
            return
        sid = job.segment.segment_id
        self.status.set_phase("running")
        try:
            proc.send(job)
            cancel_sent = False
            while True:
                event = proc.next_event()
                if isinstance(event, BatchDone):
                    self._on_batch(event.notes)
                    if not cancel_sent and self._gone(sid):
                        proc.send(CancelJob())  # compacted away or deleted meanwhile
                        cancel_sent = True
                    continue
                if isinstance(event, JobDone):
                    self._on_done(job, event)
                elif isinstance(event, JobFailed):
                    log.error("embedding failed for one segment (%s); it stays lexical", event.error)
                    self._leave_lexical(sid)
                return
        except WorkerDied as exc:
            if not self._stopping:
                self.worker.crashed(exc, sid)

    def _gone(self, sid: int) -> bool:
        with self._cond:
            return self._plan.gone(sid)

    def _on_batch(self, notes: int) -> None:
        self.status.batch_done(notes)
        if self.wake is not None:
            self.wake()

    def _on_done(self, job: EmbedJob, done: JobDone) -> None:
        sid = job.segment.segment_id
        log.debug(
            "embedding job done: segment %d %s, %s passages computed, %s reused",
            sid,
            job.op,
            done.embedded,
            done.reused,
        )
        with self._cond:
            self._plan.finished(job, done)
            self.status.passages_done(done.embedded, done.reused)
            self.worker.job_succeeded(sid)
            self._cond.notify_all()
        if self.wake is not None:
            self.wake()
        if self.after_job is not None:
            self.after_job(sid, dict(done.files))


def embed_to_completion(
    embedder: SemanticIndexer, indexer: _Indexer, report: Callable[[int, int, float | None], None]
) -> None:
    """Embed every live note of the indexer's snapshot now (`index --embed`), committing
    each finished batch as it comes (Ctrl-C keeps what is committed). `report(embedded,
    live, eta_s)` is called after every encoder batch and at least every second. The caller
    installs `embedder` as the indexer's commit hook."""
    woke = threading.Event()
    embedder.wake = woke.set
    embedder.start()
    if not embedder.running:
        return  # semantic search is off
    if indexer.manifest is not None:
        embedder.committed(indexer.manifest)
    try:
        while True:
            woke.wait(1.0)
            woke.clear()
            embedder.sync(indexer)
            embedder.publish_state()
            manifest = indexer.manifest
            if manifest is not None:
                state = semantic_state(manifest, embedder.index_dir, load_model=False)
                live = state.live_notes
                embedded = min(live, state.embedded_notes + embedder.status.job_notes)
                rate = embedder.status.notes_per_s()
                report(embedded, live, (live - embedded) / rate if rate else None)
            if embedder.settled():
                return
    finally:
        embedder.stop()
