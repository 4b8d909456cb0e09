"""Vectors mapped from disk answer exactly like decoded Parquet; an index written before the
mapped twin existed gets one without re-embedding; another model's vectors are recomputed
(the pipeline follows whatever model `semantic/encoder.py` ships)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.config import Settings
from vault_agent.contracts import SEGMENTS_DIR, Manifest, SegmentRef
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import open_writer_dirs
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.lock import WriterLock
from vault_agent.semantic import semantic_search
from vault_agent.semantic.progress import semantic_state
from vault_agent.semantic.store import MODEL_KEY, TABLE, VECTORS

from .conftest import FIXTURE_PASSAGES, fully_embedded, reader_for, settings_for, wait_until

QUERIES = ["filing taxes", "baking bread at home", "税金の申告", "如何烤面包"]


def _copy(template: Path, dst: Path) -> Settings:
    shutil.copytree(template, dst)
    return settings_for(dst)


def _recommit(settings: Settings, change: object) -> Manifest:
    """Commit the current segments as `change(seg_dir, seg)` rewrites them (a real commit)."""
    lock = WriterLock(settings.index_dir)
    idx = open_writer_dirs(settings, lock)
    try:
        assert idx.manifest is not None
        seg_dir = Path(settings.index_dir) / SEGMENTS_DIR
        segments = [change(seg_dir, seg) for seg in idx.manifest.segments]  # type: ignore[operator]
        return idx.commit_snapshot(segments, idx.manifest.applied_seq, idx.manifest.skipped)
    finally:
        lock.release()


def _without_twin(seg_dir: Path, seg: SegmentRef) -> SegmentRef:
    return seg.model_copy(update={"files": {k: v for k, v in seg.files.items() if k != VECTORS}})


def test_mapped_vectors_answer_like_decoded_parquet(embedded_template: Path, tmp_path: Path) -> None:
    settings = _copy(embedded_template, tmp_path / "vault")
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None and all(VECTORS in s.files for s in manifest.segments)
    decoded = manifest.model_copy(
        update={
            "snapshot_id": manifest.snapshot_id + 1000,
            "segments": [_without_twin(Path(), s) for s in manifest.segments],
        }
    )
    reader = reader_for(settings)
    try:
        for query in QUERIES:
            mapped = semantic_search(reader, SimpleNamespace(manifest=manifest), query, 16)
            parquet = semantic_search(reader, SimpleNamespace(manifest=decoded), query, 16)
            assert mapped is not None and parquet is not None, query
            assert mapped.hits == parquet.hits and mapped.hits, query
    finally:
        reader.close()


def test_an_index_without_twins_gets_them_without_re_embedding(
    embedded_template: Path, tmp_path: Path
) -> None:
    settings = _copy(embedded_template, tmp_path / "vault")
    before = _recommit(settings, _without_twin)
    assert not any(VECTORS in s.files for s in before.segments)
    with Writer(settings, watch=False) as writer:

        def twins() -> bool:
            m = read_current_manifest(settings.index_dir)
            return m is not None and all(VECTORS in s.files for s in m.segments)

        assert wait_until(twins)
        assert writer._semantic.passages_embedded == 0  # read from Parquet, not recomputed
    after = read_current_manifest(settings.index_dir)
    assert after is not None
    assert [s.files[TABLE] for s in after.segments] == [s.files[TABLE] for s in before.segments]


def _other_model(seg_dir: Path, seg: SegmentRef) -> SegmentRef:
    """The segment's vectors as if another model had written them (its id in the metadata)."""
    table = pq.read_table(seg_dir / seg.files[TABLE])
    meta = dict(table.schema.metadata or {})
    meta[MODEL_KEY] = b"another-model-v1"
    name = f"seg-{seg.segment_id}.embeddings_v2_other.parquet"
    pq.write_table(table.replace_schema_metadata(meta), seg_dir / name)
    files = {k: v for k, v in seg.files.items() if k != VECTORS} | {TABLE: name}
    return seg.model_copy(update={"files": files})


def test_vectors_of_another_model_are_recomputed(embedded_template: Path, tmp_path: Path) -> None:
    settings = _copy(embedded_template, tmp_path / "vault")
    manifest = _recommit(settings, _other_model)
    state = semantic_state(manifest, settings.index_dir, load_model=False)
    assert (state.embedded_notes, state.live_notes) == (0, 16)  # not this model's: missing
    reader = reader_for(settings)
    try:
        assert semantic_search(reader, SimpleNamespace(manifest=manifest), "filing taxes", 3) is None
    finally:
        reader.close()
    with Writer(settings, watch=False) as writer:
        assert wait_until(lambda: fully_embedded(settings) and _current_model_everywhere(settings))
        assert writer._semantic.passages_embedded == FIXTURE_PASSAGES


def _current_model_everywhere(settings: Settings) -> bool:
    manifest = read_current_manifest(settings.index_dir)
    if manifest is None:
        return False
    state = semantic_state(manifest, settings.index_dir, load_model=False)
    return state.embedded_notes == state.live_notes == 16 and all(
        "other" not in s.files[TABLE] for s in manifest.segments
    )


def test_parts_and_twins_are_arrow_any_reader_can_open(embedded_template: Path) -> None:
    manifest = read_current_manifest(settings_for(embedded_template).index_dir)
    assert manifest is not None
    seg_dir = Path(settings_for(embedded_template).index_dir) / SEGMENTS_DIR
    for seg in manifest.segments:
        with pa.memory_map(str(seg_dir / seg.files[VECTORS])) as src:
            table = pa.ipc.open_file(src).read_all()
        parquet = pq.read_table(seg_dir / seg.files[TABLE])
        assert table.num_rows == parquet.num_rows
        assert table["text_sha"].to_pylist() == parquet["text_sha"].to_pylist()
        assert table["vector"].to_pylist() == parquet["vector"].to_pylist()
