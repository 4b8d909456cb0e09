"""Embedding a user can watch: progress published per batch (durable, visible in status and on
every search answer), the worker process supervised (a crash restarts it), and nothing
embedded twice. Real writer, real worker process, real model."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from vault_agent.api.human.status import render_status
from vault_agent.config import Settings
from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.query.search import SearchRequest, search
from vault_agent.query.status import index_status
from vault_agent.semantic.embedder import WORKER_NICE
from vault_agent.semantic.progress import (
    EMBEDDER_STATE_FILE,
    EmbedderState,
    read_embedder_state,
    semantic_state,
)
from vault_agent.semantic.store import PART_PREFIX, TABLE, VECTORS

from .conftest import copy_vault, fully_embedded, process_running, reader_for, settings_for, wait_until

TOPICS = ["harbor", "budget", "garden", "kernel", "ledger", "lantern", "sprint", "recipe"]


def bulk_vault(root: Path, notes: int = 240) -> Settings:
    """A vault of `notes` short synthetic notes (distinct text, so none shares a vector)."""
    vault = root / "bulk"
    for i in range(notes):
        topic = TOPICS[i % len(TOPICS)]
        path = vault / topic / f"note {i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# {topic.title()} log {i}\n\nEntry {i}: the {topic} review moved to week {i % 13}.\n",
            encoding="utf-8",
        )
    return settings_for(vault)


def small_batches(writer: Writer) -> Writer:
    """Batches of 8 passages published every 40 (set before `start`)."""
    writer._semantic.batch_passages = 8
    writer._semantic.publish_passages = 40
    return writer


def test_progress_is_published_per_batch_and_visible_everywhere(tmp_path: Path) -> None:
    settings = bulk_vault(tmp_path)
    build_index(settings, full=True)
    seen: list[tuple[int, int, str, list[str]]] = []
    failures: list[BaseException] = []
    reader = reader_for(settings)

    def between_jobs(segment_id: int, files: dict[str, str]) -> None:
        # The worker waits for this to return: the state here is the state between batches.
        try:
            assert wait_until(lambda: _committed(settings, files))
            manifest = read_current_manifest(settings.index_dir)
            assert manifest is not None
            state = semantic_state(manifest, settings.index_dir, load_model=False)
            details = index_status(settings, verbose=True).data.details
            assert details is not None
            warnings = search(reader, SearchRequest("harbor review")).warnings
            seen.append(
                (state.embedded_notes, details.embedded_notes, details.embedder, [w.code for w in warnings])
            )
            if state.pending:
                assert warnings[0].message.startswith(
                    f"embeddings cover {int(100 * state.share)}% of notes ({state.embedded_notes} of 240) "
                    "and are being computed"
                )
        except BaseException as exc:  # reported on the test thread
            failures.append(exc)

    try:
        writer = small_batches(
            Writer(settings, watch=False)
        )  # before start: the first job is planned at once
        writer._semantic.after_job = between_jobs
        with writer:
            assert wait_until(lambda: fully_embedded(settings))
            embedded = writer._semantic.passages_embedded
    finally:
        reader.close()
    assert failures == []
    counts = [s[0] for s in seen]
    assert counts == sorted(counts) and counts[-1] == 240
    assert len([c for c in counts if 0 < c < 240]) >= 4  # 240 notes in batches of 40: visible mid-way
    for embedded_notes, status_notes, embedder, codes in seen:
        assert status_notes == embedded_notes and embedder == "running"
        assert codes == (["SEMANTIC_PENDING"] if embedded_notes < 240 else [])
    assert embedded == 240  # each note once, though published in six parts
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    for seg in manifest.segments:  # the complete files replaced the parts
        assert TABLE in seg.files and VECTORS in seg.files and seg.embedded_notes == 0
        assert not [k for k in seg.files if k.startswith(PART_PREFIX)]


def _committed(settings: Settings, files: dict[str, str]) -> bool:
    manifest = read_current_manifest(settings.index_dir)
    named = {n for seg in (manifest.segments if manifest else []) for n in seg.files.values()}
    return set(files.values()) <= named


def test_a_killed_worker_is_restarted_and_reported(tmp_path: Path) -> None:
    settings = bulk_vault(tmp_path)
    build_index(settings, full=True)
    killed = threading.Event()
    niceness: list[int] = []

    def kill_once(segment_id: int, files: dict[str, str]) -> None:
        if not killed.is_set():
            killed.set()
            pid = writer._semantic.worker_pid
            assert pid is not None
            niceness.extend(_thread_nice(pid))
            os.kill(pid, signal.SIGKILL)  # between jobs: the next one finds it dead

    writer = small_batches(Writer(settings, watch=False))
    writer._semantic.after_job = kill_once
    with writer:
        assert wait_until(lambda: fully_embedded(settings))
        assert writer._semantic.restarts == 1
        assert wait_until(lambda: _published_restarts(settings) == 1)
        assert niceness and set(niceness) == {WORKER_NICE}  # every thread of the worker yields to queries
        details = index_status(settings, verbose=True).data.details
        assert details is not None and details.embedder_restarts == 1
        assert details.semantic_search == "ready" and details.embedded_notes == 240
        worker = writer._semantic.worker_pid
    # The writer stopped its worker with it, and says nothing computes embeddings any more.
    assert worker is None or not process_running(worker)
    assert read_embedder_state(settings.index_dir) is None


def _thread_nice(pid: int) -> list[int]:
    """The nice value of every thread of a process (Linux sets it per thread)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        out.append(int(fields[16]))  # field 19 of stat: nice
    return out


def _published_restarts(settings: Settings) -> int | None:
    state = read_embedder_state(settings.index_dir)
    return state.restarts if state is not None else None


def test_a_restart_and_a_compaction_embed_nothing_again(tmp_path: Path) -> None:
    settings = bulk_vault(tmp_path, notes=40)
    build_index(settings, full=True)
    with Writer(settings, watch=False) as writer:
        assert wait_until(lambda: fully_embedded(settings))
        assert writer._semantic.passages_embedded == 40
    with Writer(settings, watch=False) as writer:
        # Nine one-note edits: nine small segments, compacted into one (compaction.py), whose
        # vectors come from the files of the segments it merged.
        for i, note in enumerate(sorted(Path(settings.vault).rglob("*.md"))[:9]):
            note.write_text(note.read_text(encoding="utf-8") + f"\nfollow-up {i}\n", encoding="utf-8")
            writer._on_hint(note.relative_to(settings.vault).as_posix(), False)
            target = read_current_manifest(settings.index_dir)
            assert target is not None
            assert wait_until(lambda t=target.snapshot_id: _newer_embedded(settings, t))  # type: ignore[misc]
        assert writer._semantic.passages_embedded == 9  # the edited notes only
        assert wait_until(lambda: _compacted(settings))
        assert wait_until(lambda: fully_embedded(settings))
        assert writer._semantic.passages_embedded == 9  # the merged segment reused every vector
        assert writer._semantic.passages_reused >= 9


def _newer_embedded(settings: Settings, after: int) -> bool:
    manifest = read_current_manifest(settings.index_dir)
    return manifest is not None and manifest.snapshot_id > after and fully_embedded(settings)


def _compacted(settings: Settings) -> bool:
    manifest = read_current_manifest(settings.index_dir)
    return manifest is not None and len(manifest.segments) <= 2


def test_files_are_in_the_segment_dir_and_collectable(tmp_path: Path) -> None:
    from vault_agent.indexer.snapshot import SEGMENT_RE

    settings = bulk_vault(tmp_path, notes=16)
    build_index(settings, full=True)
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    for seg in manifest.segments:
        for key in (TABLE, VECTORS):
            name = seg.files[key]
            assert SEGMENT_RE.match(name)  # GC knows them (and removes them once unreferenced)
            assert (Path(settings.index_dir) / SEGMENTS_DIR / name).is_file()


def test_status_and_answers_show_the_eta_at_the_embedder_rate(tmp_path: Path) -> None:
    """A live embedder's published rate (embedder.json, as the writer writes it) gives the ETA
    in `status --verbose`, its human line and every search answer's SEMANTIC_PENDING."""
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)  # lexical only: 16 notes, none embedded
    state = EmbedderState(
        pid=os.getpid(), heartbeat_at=time.time(), command="writer", phase="running", notes_per_s=4.0
    )
    (settings.index_dir / EMBEDDER_STATE_FILE).write_text(state.model_dump_json(), encoding="utf-8")
    out = index_status(settings, verbose=True)
    details = out.data.details
    assert details is not None
    assert (details.semantic_search, details.embedded_notes, details.embedding_eta_seconds) == (
        "pending",
        0,
        4,
    )
    line = render_status({"data": out.data.model_dump(mode="json", by_alias=True)})
    assert "semantic search: pending; 0 of 16 notes embedded (0%), about 4 s left, embedder running" in line
    reader = reader_for(settings)
    try:
        [warning] = search(reader, SearchRequest("harbor review")).warnings
    finally:
        reader.close()
    assert warning.code == "SEMANTIC_PENDING" and "about 4 s left" in warning.message
