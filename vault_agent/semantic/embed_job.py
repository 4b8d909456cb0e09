"""One embedding job, as the worker process runs it (worker.py): a batch of one segment.

A job embeds the next `budget` passages of a segment's notes that no published partial
file covers yet (whole notes, in path order), then publishes them: as the segment's next
partial file, or, when that finishes the segment, as its complete files (every note: the
parts' rows and the new ones; the parts leave the manifest with that commit). So progress
is durable per batch, and a crash loses at most the batch in flight.

A passage whose hash is in an embedding file the writer has seen (`sources`: any segment,
before or after a commit or a compaction) reuses that vector: unchanged notes are never
embedded again. The encoder runs on `threads` threads (its time is onnxruntime's or numpy's
matrix products, which release the GIL; each call single-threaded, see worker.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, SegmentRef
from vault_agent.heap import release_free_memory
from vault_agent.semantic.encoder import Encoder
from vault_agent.semantic.passages import READ_CHARS, Passage, passages_from_chunks
from vault_agent.semantic.store import TABLE, VECTORS, covered_paths, file_model, part_key, read_vectors
from vault_agent.semantic.store_write import Rows, write_complete, write_part, write_vectors_twin
from vault_agent.semantic.vectors import quantize
from vault_agent.semantic.worker_messages import EmbedJob

__all__ = ["EmbedJob", "JobResult", "SegmentEmbedder", "segment_passages"]


@dataclass
class JobResult:
    files: dict[str, str]  # SegmentRef.files entries to add
    complete: bool  # the segment's complete files (the parts are superseded)
    notes: int  # live notes the segment's files cover after this job
    embedded: int  # passages the model computed
    reused: int  # passages whose vectors came from `sources`


CHUNK_COLUMNS = ["path", "ordinal", "heading_path", "text"]
# Chunk rows turned into Python objects at a time (segment_passages; 2,048 peaked 8 MB higher).
READ_ROWS = 512


def segment_passages(index_dir: Path, ref: SegmentRef) -> list[Passage]:
    """The passages of every live note of a lexical segment (tombstoned notes are skipped)."""
    seg_dir = Path(index_dir) / SEGMENTS_DIR
    # Read on this thread: Arrow's reader threads each keep a malloc arena, which held
    # ~15 MB of a 5,120-note segment's read after the trim (ops/bench/bench_embed.py).
    notes = pq.read_table(seg_dir / ref.files["notes"], columns=["path", "title"], use_threads=False)
    titles = dict(zip(notes["path"].to_pylist(), notes["title"].to_pylist(), strict=True))
    del notes
    dead = pa.array(ref.deleted, pa.string()) if ref.deleted else None
    # Streamed: READ_ROWS chunk rows at a time, each text cut in Arrow to what a passage can
    # read before any Python string exists, a note's rows carried over to the next batch
    # until its last one is read (rows are in (path, ordinal) order). Materialising the
    # whole segment's columns at once made the worker's peak (5,120 notes: +100 MB for
    # 7 MB of passages, most of it kept by the allocators afterwards).
    keep = READ_CHARS
    out: list[Passage] = []
    carry: list[list[Any]] = [[], [], [], []]
    for batch in pq.ParquetFile(seg_dir / ref.files["chunks"]).iter_batches(
        batch_size=READ_ROWS, columns=CHUNK_COLUMNS, use_threads=False
    ):
        batch = batch.set_column(3, "text", pc.utf8_slice_codeunits(batch.column(3), 0, keep))
        if dead is not None:
            batch = batch.filter(pc.invert(pc.is_in(batch.column(0), value_set=dead)))
        columns = [a + batch.column(k).to_pylist() for k, a in enumerate(carry)]
        paths = columns[0]
        cut = len(paths)  # the last note may go on in the next batch
        while cut > 0 and paths[cut - 1] == paths[-1]:
            cut -= 1
        out += _passages_of(columns, 0, cut, titles)
        carry = [c[cut:] for c in columns]
    out += _passages_of(carry, 0, len(carry[0]), titles)
    pa.default_memory_pool().release_unused()  # Arrow's pool keeps freed pages otherwise
    release_free_memory()  # and the C heap's: back to the kernel before the model runs
    return out


def _passages_of(
    columns: list[list[Any]], start: int, end: int, titles: dict[str, str | None]
) -> list[Passage]:
    """passages_from_chunks over rows start:end of the CHUNK_COLUMNS columns."""
    path, ordinal, heading_path, text = (c[start:end] for c in columns)
    return passages_from_chunks(path, ordinal, heading_path, text, titles)


def _note_prefix(passages: Sequence[Passage], budget: int) -> int:
    """How many passages make the first whole notes of `passages` within `budget` (at
    least one note, so a note with more passages than the budget still progresses)."""
    end = 0
    while end < len(passages):
        nxt = end + 1
        while nxt < len(passages) and passages[nxt].path == passages[end].path:
            nxt += 1
        if end and nxt > budget:
            break
        end = nxt
    return end


Stop = Callable[[], bool]
OnBatch = Callable[[int, int], None]  # (notes completed, passages embedded) after each encoder batch


class SegmentEmbedder:
    """Runs jobs for one state dir with one encoder (the worker keeps it for its life)."""

    def __init__(self, index_dir: Path, encoder: Encoder, threads: int) -> None:
        self.index_dir = Path(index_dir)
        self.encoder = encoder
        self._pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="vault-agent-embed")
        self._threads = max(1, threads)
        self._passages: tuple[tuple[int, int], list[Passage]] | None = None  # the last segment's

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _segment(self, ref: SegmentRef) -> list[Passage]:
        key = (ref.segment_id, len(ref.deleted))  # tombstones only grow
        if self._passages is None or self._passages[0] != key:
            self._passages = None  # the last segment's go before this one's are read
            self._passages = (key, segment_passages(self.index_dir, ref))
        return self._passages[1]

    def _cached(self, sources: Sequence[str], shas: set[str]) -> dict[str, tuple[np.ndarray, np.float32]]:
        """(codes, scale) for passage hashes found in `sources` (newest first)."""
        found: dict[str, tuple[np.ndarray, np.float32]] = {}
        seg_dir = self.index_dir / SEGMENTS_DIR
        for name in sources:
            if len(found) == len(shas):
                break
            path = seg_dir / name
            if file_model(path) != self.encoder.model_id:
                continue  # GC'd, unreadable, or another model's vectors
            try:
                rows, codes, scale = read_vectors(path, shas - found.keys())
            except (OSError, pa.ArrowInvalid):
                continue
            for sha, code, sc in zip(rows["text_sha"].to_pylist(), codes, scale, strict=True):
                found.setdefault(sha, (code, sc))
        return found

    def run(self, job: EmbedJob, stop: Stop, on_batch: OnBatch) -> JobResult | None:
        """Run one job; None when `stop` said so before it finished (nothing published)."""
        if job.op == "twin":
            return self._twin(job.segment)
        ref = job.segment
        passages = self._segment(ref)
        live = {p.path for p in passages}
        seg_dir = self.index_dir / SEGMENTS_DIR
        covered: set[str] = set()
        for name in job.parts:
            covered |= covered_paths(seg_dir / name)
        covered &= live
        todo = [p for p in passages if p.path not in covered]
        take = _note_prefix(todo, job.budget)
        batch_passages = todo[:take]
        rows = self._embed(batch_passages, list(job.parts) + list(job.sources), job.batch, stop, on_batch)
        if rows is None:
            return None
        embedded, reused, new_rows = rows
        notes = len(covered) + len({p.path for p in batch_passages})
        model = self.encoder.model_id
        if take < len(todo):
            name = write_part(self.index_dir, ref.segment_id, part_key(job.next_part), model, new_rows)
            return JobResult({part_key(job.next_part): name}, False, notes, embedded, reused)
        complete = self._with_parts(job.parts, live, new_rows)
        files = write_complete(self.index_dir, ref.segment_id, model, complete)
        return JobResult(files, True, len(live), embedded, reused)

    def _embed(
        self, passages: list[Passage], sources: list[str], batch: int, stop: Stop, on_batch: OnBatch
    ) -> tuple[int, int, Rows] | None:
        encoder = self.encoder
        cached = self._cached(sources, {p.text_sha for p in passages})
        codes = np.zeros((len(passages), encoder.dim), np.int8)
        scale = np.ones(len(passages), np.float32)
        # Shortest first: each encoder call gets passages of similar length, so its padded
        # batches (e5_encoder: padded to the longest) waste little (text length stands in
        # for token count, which the encoder counts again exactly inside the call).
        missing = sorted(
            (i for i, p in enumerate(passages) if p.text_sha not in cached),
            key=lambda i: len(passages[i].text),
        )
        for i, p in enumerate(passages):
            if p.text_sha in cached:
                codes[i], scale[i] = cached[p.text_sha]
        batches = [missing[s : s + batch] for s in range(0, len(missing), max(1, batch))]
        last_of = {
            passages[i].path: i for i in missing
        }  # a note is done with its last passage (in this order)

        def embed(idx: list[int]) -> tuple[list[int], np.ndarray, np.ndarray] | None:
            if stop():
                return None
            return (idx, *quantize(encoder.embed_passages([passages[i].text for i in idx])))

        # Several batches at once: the encoder releases the GIL in onnxruntime (or numpy), so
        # threads scale with cores (bench_embed.py --threads).
        pool = self._pool if len(batches) > 1 and self._threads > 1 else None
        results = pool.map(embed, batches) if pool is not None else map(embed, batches)
        for done in results:
            if done is None:
                return None  # stopping
            idx, batch_codes, batch_scale = done
            codes[idx], scale[idx] = batch_codes, batch_scale
            on_batch(sum(1 for i in idx if last_of[passages[i].path] == i), len(idx))
        rows = Rows(
            [p.path for p in passages],
            [p.chunk_ordinal for p in passages],
            [p.text_sha for p in passages],
            codes,
            scale,
        )
        return len(missing), len(passages) - len(missing), rows

    def _with_parts(self, parts: list[str], live: set[str], new_rows: Rows) -> Rows:
        """Every live note's rows: those of the published parts and the new ones, in
        (path, chunk ordinal) order like the segment."""
        seg_dir = self.index_dir / SEGMENTS_DIR
        paths, ordinals, shas = list(new_rows.paths), list(new_rows.ordinals), list(new_rows.shas)
        codes, scale = [new_rows.codes], [new_rows.scale]
        for name in parts:
            table, c, s = read_vectors(seg_dir / name)
            keep = np.array([p in live for p in table["path"].to_pylist()], dtype=bool)
            if not keep.any():
                continue
            table = table.filter(pa.array(keep))
            paths += table["path"].to_pylist()
            ordinals += table["chunk_ordinal"].to_pylist()
            shas += table["text_sha"].to_pylist()
            codes.append(c[keep])
            scale.append(s[keep])
        order = sorted(range(len(paths)), key=lambda i: (paths[i], ordinals[i]))
        all_codes, all_scale = np.concatenate(codes)[order], np.concatenate(scale)[order]
        return Rows(
            [paths[i] for i in order],
            [ordinals[i] for i in order],
            [shas[i] for i in order],
            all_codes,
            all_scale,
        )

    def _twin(self, ref: SegmentRef) -> JobResult:
        seg_dir = self.index_dir / SEGMENTS_DIR
        name = ref.files[TABLE]
        model = file_model(seg_dir / name)
        table, codes, scale = read_vectors(seg_dir / name)
        rows = Rows(
            table["path"].to_pylist(),
            table["chunk_ordinal"].to_pylist(),
            table["text_sha"].to_pylist(),
            codes,
            scale,
        )
        twin = write_vectors_twin(self.index_dir, ref.segment_id, model or self.encoder.model_id, rows)
        live = max(ref.note_count - len(ref.deleted), 0)
        return JobResult({VECTORS: twin}, True, live, 0, 0)
