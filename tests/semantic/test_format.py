"""Embedding-format versioning: a snapshot whose embeddings are of an older format (format 1:
float32 vectors, one per note, under `files["embeddings"]`) is detected, not read, and
re-embedded by the next writer, which drops the old file from the manifest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index, open_writer_dirs
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.lock import WriterLock
from vault_agent.semantic import semantic_search, semantic_state
from vault_agent.semantic.encoder import Encoder
from vault_agent.semantic.store import LEGACY_TABLES, TABLE, file_model

from .conftest import copy_vault, fully_embedded, reader_for, settings_for, wait_until


def _write_format_1(seg_dir: Path, segment_id: int, paths: list[str]) -> str:
    """An embedding file exactly as format 1 wrote it (float32 vectors, model metadata only)."""
    schema = pa.schema(
        [
            ("path", pa.string()),
            ("chunk_ordinal", pa.int32()),
            ("text_sha", pa.string()),
            ("vector", pa.list_(pa.float32(), 512)),
        ],
        metadata={b"vault_agent.model": b"use-multilingual-v3"},
    )
    flat = pa.array(np.full(len(paths) * 512, 1 / np.sqrt(512), np.float32))
    table = pa.Table.from_arrays(
        [
            pa.array(paths),
            pa.array([0] * len(paths), pa.int32()),
            pa.array(["x"] * len(paths)),
            pa.FixedSizeListArray.from_arrays(flat, 512),
        ],
        schema=schema,
    )
    name = f"seg-{segment_id}.embeddings.parquet"
    pq.write_table(table, seg_dir / name)
    return name


def test_older_embedding_format_is_detected_and_re_embedded(tmp_path: Path, encoder: Encoder) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)
    lock = WriterLock(settings.index_dir)
    idx = open_writer_dirs(settings, lock)
    try:
        assert idx.manifest is not None
        seg_dir = Path(settings.index_dir) / SEGMENTS_DIR
        segments = []
        for seg in idx.manifest.segments:
            paths = pq.read_table(seg_dir / seg.files["notes"], columns=["path"])["path"].to_pylist()
            old = _write_format_1(seg_dir, seg.segment_id, paths)
            assert file_model(seg_dir / old) is None  # not the current format: never read
            segments.append(seg.model_copy(update={"files": {**seg.files, "embeddings": old}}))
        idx.commit_snapshot(segments, idx.manifest.applied_seq, idx.manifest.skipped)
    finally:
        lock.release()
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    assert semantic_state(manifest).pending  # old vectors count as missing
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            assert semantic_search(reader, view, "filing taxes", 3) is None
        with Writer(settings, watch=False):
            assert wait_until(lambda: fully_embedded(settings))
        manifest = read_current_manifest(settings.index_dir)
        assert manifest is not None
        assert all(TABLE in s.files and not set(LEGACY_TABLES) & s.files.keys() for s in manifest.segments)
        with reader.acquire() as view:
            found = semantic_search(reader, view, "filing taxes", 3)
        assert found is not None and "english/Tax Return.md" in [p for p, _, _ in found.hits]
    finally:
        reader.close()
