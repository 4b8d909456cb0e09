"""Background embeddings in the writer: after each lexical commit, embed what changed.

The writer calls `SemanticIndexer.sync(indexer)` on its own thread whenever it is idle
(after a build, after compaction). `sync` does two things, both cheap:
1. publish: segments whose embedding file the worker finished get `files["embeddings"]`
   in a new snapshot (`Indexer.commit_snapshot`: same segments, same counts, only the
   file list grows; the lexical data does not change);
2. hand the current manifest to the worker thread.
The worker embeds, per segment without an embedding file, one passage per live note. A
passage whose text hash is in an embedding file the writer has seen (any segment, before
or after a commit or a compaction) reuses that vector: unchanged notes are never embedded
again. Files are written like every segment file (tmp/, fsync, rename) and only become
part of a snapshot when `sync` commits them, so a crash at any instant leaves CURRENT on
a complete snapshot (at worst with fewer embeddings, caught up after the restart).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest, SegmentRef
from vault_agent.semantic.encoder import Encoder, load_encoder
from vault_agent.semantic.passages import Passage, passages_from_chunks
from vault_agent.semantic.settings import embed_threads, semantic_enabled
from vault_agent.semantic.store import LEGACY_TABLES, TABLE, file_model, read_vectors
from vault_agent.semantic.store_write import write_embeddings
from vault_agent.semantic.vectors import quantize
from vault_agent.supervise import Spawn, plain_thread


class SnapshotCommitter(Protocol):
    """What `sync` needs of the writer that calls it (indexer.build.Indexer; semantic may not
    import the indexer: tests/kernel/test_boundaries.py)."""

    @property
    def manifest(self) -> Manifest | None: ...

    def commit_snapshot(
        self, segments: list[SegmentRef], applied_seq: int, skipped: dict[str, int] | None
    ) -> Manifest: ...

log = logging.getLogger("vault_agent.semantic")

EMBED_BATCH_PASSAGES = 64  # passages per encoder call between stop checks
MAX_CACHE_FILES = 64  # embedding files remembered as cache sources

__all__ = ["SemanticIndexer", "segment_passages"]


def segment_passages(index_dir: Path, ref: SegmentRef) -> list[Passage]:
    """The passages of every live note of a lexical segment (tombstoned notes are skipped)."""
    seg_dir = Path(index_dir) / SEGMENTS_DIR
    chunks = pq.read_table(seg_dir / ref.files["chunks"], columns=["path", "ordinal", "heading_path", "text"])
    notes = pq.read_table(seg_dir / ref.files["notes"], columns=["path", "title"])
    if ref.deleted:
        dead = pa.array(ref.deleted, pa.string())
        chunks = chunks.filter(pc.invert(pc.is_in(chunks["path"], value_set=dead)))
    titles = dict(zip(notes["path"].to_pylist(), notes["title"].to_pylist(), strict=True))
    return passages_from_chunks(
        chunks["path"].to_pylist(),
        chunks["ordinal"].to_pylist(),
        chunks["heading_path"].to_pylist(),
        chunks["text"].to_pylist(),
        titles,
    )


class SemanticIndexer:
    """The writer's embedding worker (one thread); see the module doc."""

    def __init__(
        self,
        index_dir: Path,
        wake: Callable[[], None] | None = None,
        loader: Callable[[], Encoder | None] = load_encoder,
        spawn: Spawn = plain_thread,
    ) -> None:
        self.index_dir = Path(index_dir)
        self._spawn = spawn  # the writer's supervisor: a failure restarts the worker
        self._wake = wake
        self._loader = loader
        self._cond = threading.Condition()
        self._target: Manifest | None = None
        self._ready: dict[int, str] = {}  # segment id → finished embedding file
        self._failed: set[int] = set()  # segments whose embedding failed (retried on restart)
        self._known: dict[str, None] = {}  # embedding files seen, oldest first (cache sources)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.model_failed = False

    # ----- writer side -------------------------------------------------------------
    def start(self) -> None:
        if not semantic_enabled() or self._thread is not None:
            return
        self._thread = self._spawn("embedder", self._run)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None

    def sync(self, indexer: SnapshotCommitter) -> Manifest | None:
        """Publish finished embedding files, then point the worker at the newest manifest.

        Runs on the writer thread (the only committer). Returns the new manifest when it
        committed one.
        """
        if self._thread is None:
            return None
        manifest: Manifest | None = indexer.manifest
        if manifest is None or not getattr(indexer, "compatible", True):
            return None
        committed = None
        with self._cond:
            ready = {s.segment_id: self._ready.pop(s.segment_id) for s in manifest.segments if s.segment_id in self._ready}
            self._ready.clear()  # files of segments compacted away meanwhile: garbage for GC
        seg_dir = self.index_dir / SEGMENTS_DIR
        ready = {sid: name for sid, name in ready.items() if (seg_dir / name).exists()}
        if ready:
            segments = [
                s.model_copy(update={"files": _with_embeddings(s.files, ready[s.segment_id])})
                if s.segment_id in ready
                else s
                for s in manifest.segments
            ]
            committed = indexer.commit_snapshot(segments, manifest.applied_seq, manifest.skipped)
            manifest = committed
        with self._cond:
            if self._target is None or self._target.snapshot_id != manifest.snapshot_id:
                self._target = manifest
                self._cond.notify_all()
        return committed

    # ----- worker thread -----------------------------------------------------------
    def _todo(self, manifest: Manifest) -> list[SegmentRef]:
        for s in manifest.segments:
            if TABLE in s.files:
                self._known[s.files[TABLE]] = None
        while len(self._known) > MAX_CACHE_FILES:
            del self._known[next(iter(self._known))]
        return [
            s
            for s in manifest.segments
            if TABLE not in s.files and s.segment_id not in self._ready and s.segment_id not in self._failed
        ]

    def _has_new_target(self, seen: int | None) -> bool:
        return self._stopping or (self._target is not None and self._target.snapshot_id != seen)

    def _run(self) -> None:
        seen: int | None = None
        while True:
            with self._cond:
                self._cond.wait_for(functools.partial(self._has_new_target, seen))
                if self._stopping:
                    return
                target = self._target
            assert target is not None
            seen = target.snapshot_id
            todo = self._todo(target)
            if not todo:
                continue
            encoder = self._loader()
            if encoder is None:
                self.model_failed = True
                return  # lexical keeps working; load_encoder logged the one warning
            for ref in todo:
                if self._stopping:
                    return
                try:
                    name = self._embed_segment(encoder, ref)
                except Exception as exc:  # a bad segment must not stop the worker
                    log.error("embedding failed for one segment (%s)", type(exc).__name__)
                    with self._cond:
                        self._failed.add(ref.segment_id)
                    continue
                if name is None:
                    return  # stopping
                with self._cond:
                    self._ready[ref.segment_id] = name
                    self._known[name] = None
                if self._wake is not None:
                    self._wake()

    def _cached(self, model: str, shas: set[str]) -> dict[str, tuple[np.ndarray, np.float32]]:
        """(codes, scale) for passage hashes found in embedding files seen before (newest first)."""
        found: dict[str, tuple[np.ndarray, np.float32]] = {}
        for name in reversed(list(self._known)):
            if len(found) == len(shas):
                break
            path = self.index_dir / SEGMENTS_DIR / name
            if file_model(path) != model:
                continue  # GC'd, unreadable, or another model's vectors
            try:
                rows, codes, scale = read_vectors(path, shas - found.keys())
            except OSError:
                continue
            for sha, code, sc in zip(rows["text_sha"].to_pylist(), codes, scale, strict=True):
                found.setdefault(sha, (code, sc))
        return found

    def _embed_segment(self, encoder: Encoder, ref: SegmentRef) -> str | None:
        passages = segment_passages(self.index_dir, ref)
        cached = self._cached(encoder.model_id, {p.text_sha for p in passages})
        codes = np.zeros((len(passages), encoder.dim), np.int8)
        scale = np.ones(len(passages), np.float32)
        missing = [i for i, p in enumerate(passages) if p.text_sha not in cached]
        for i, p in enumerate(passages):
            if p.text_sha in cached:
                codes[i], scale[i] = cached[p.text_sha]
        batches = [missing[s : s + EMBED_BATCH_PASSAGES] for s in range(0, len(missing), EMBED_BATCH_PASSAGES)]

        def embed(idx: list[int]) -> tuple[list[int], np.ndarray, np.ndarray] | None:
            if self._stopping:
                return None
            return (idx, *quantize(encoder.embed_passages([passages[i].text for i in idx])))

        # Several batches at once: the model's time is numpy matrix products, which release
        # the GIL, so threads scale with cores (bench_semantic.py throughput --threads).
        with ThreadPoolExecutor(max_workers=max(1, min(embed_threads(), len(batches)))) as pool:
            for done in pool.map(embed, batches):
                if done is None:
                    return None  # stopping
                idx, batch_codes, batch_scale = done
                codes[idx], scale[idx] = batch_codes, batch_scale
        return write_embeddings(
            self.index_dir,
            ref.segment_id,
            encoder.model_id,
            [p.path for p in passages],
            [p.chunk_ordinal for p in passages],
            [p.text_sha for p in passages],
            codes,
            scale,
        )


def _with_embeddings(files: dict[str, str], name: str) -> dict[str, str]:
    """A segment's file list with its new embedding file; an older format's file is dropped
    (GC removes it once no kept snapshot names it)."""
    return {k: v for k, v in files.items() if k not in LEGACY_TABLES} | {TABLE: name}
