"""Semantic search with the real bundled model: embeddings in the snapshot, incremental
re-embedding, lag warnings, paraphrase retrieval in English, Chinese and Japanese."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from vault_agent.config import Settings
from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.semantic import rrf, semantic_search, semantic_state, semantic_warnings
from vault_agent.semantic.encoder import Encoder, active_model
from vault_agent.semantic.fusion import RRF_K
from vault_agent.semantic.passages import PASSAGE_TOKENS, WINDOWS, passages_from_chunks
from vault_agent.semantic.store import TABLE

from .conftest import FIXTURE, copy_vault, fully_embedded, reader_for, settings_for, wait_until

QUERIES = json.loads((FIXTURE.parent / "semantic-queries.json").read_text(encoding="utf-8"))["queries"]


def _hits(settings: Settings, q: str, k: int = 3) -> list[str]:
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            found = semantic_search(reader, view, q, k)
    finally:
        reader.close()
    assert found is not None
    return [p for p, _, _ in found.hits]


def test_embeddings_are_stored_in_the_snapshot_as_parquet(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    files = [s.files[TABLE] for s in manifest.segments]
    table = pq.read_table(Path(settings.index_dir) / SEGMENTS_DIR / files[0])
    assert table.column_names == ["path", "chunk_ordinal", "text_sha", "vector", "scale"]
    # one note passage per note (plus section passages when passages.MAX_SECTIONS > 0)
    assert len(set(table["path"].to_pylist())) == manifest.note_count == 16
    assert table.num_rows >= 16
    assert table.schema.field("vector").type.list_size == active_model().dim == 384  # e5 on this platform
    assert table.schema.metadata[b"vault_agent.model"].decode() == active_model().model_id
    # any Parquet reader gets unit vectors back: int8 codes times the row's scale
    codes = np.array(table["vector"].to_pylist(), dtype=np.float32)
    norms = np.linalg.norm(codes * np.array(table["scale"].to_pylist())[:, None], axis=1)
    assert np.allclose(norms, 1.0, atol=0.01)
    state = semantic_state(manifest)
    assert (state.embedded_notes, state.live_notes, state.share, state.pending) == (16, 16, 1.0, False)


def test_paraphrase_queries_find_their_note(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    en = next(q for q in QUERIES if q["kind"] == "en")
    assert en["targets"][0] in _hits(settings, en["q"])


def test_cjk_paraphrase_queries_find_their_note(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    for kind in ("zh", "ja"):
        found = [q["targets"][0] in _hits(settings, q["q"]) for q in QUERIES if q["kind"] == kind]
        assert sum(found) >= len(found) - 1, kind  # recall@3 on the set: at most one miss


def test_only_changed_notes_are_embedded_again(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, writer = embedded_vault
    before = writer._semantic.passages_embedded  # computed by the real model in the worker process
    assert before == 0 and writer._semantic.worker_pid is None  # a restart re-embeds nothing
    snap = read_current_manifest(settings.index_dir)
    assert snap is not None
    note = Path(settings.vault) / "english" / "Tax Return.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nKeep copies for ten years.\n", encoding="utf-8")
    (Path(settings.vault) / "english" / "New.md").write_text(
        "# Fresh note\n\nabout kites\n", encoding="utf-8"
    )
    writer._on_hint("english/Tax Return.md", False)
    writer._on_hint("english/New.md", False)

    def caught_up() -> bool:
        m = read_current_manifest(settings.index_dir)
        return m is not None and m.note_count == 17 and fully_embedded(settings)

    assert wait_until(caught_up)
    # exactly the passages of the edited note and of the new one: nothing of the 15 others
    m = read_current_manifest(settings.index_dir)
    assert m is not None
    newest = max(m.segments, key=lambda seg: seg.segment_id)  # the segment of the change
    rows = pq.read_table(Path(settings.index_dir) / SEGMENTS_DIR / newest.files[TABLE], columns=["path"])[
        "path"
    ].to_pylist()
    assert sorted(set(rows)) == ["english/New.md", "english/Tax Return.md"]
    assert writer._semantic.passages_embedded - before == len(rows)
    assert "english/New.md" in _hits(settings, "flying kites", k=2)
    # The edited note's old vector (older segment, tombstoned) is never answered twice.
    paths = _hits(settings, "filing taxes", k=17)
    assert len(paths) == len(set(paths)) == 17


def test_off_until_a_process_computes_them(tmp_path: Path, encoder: Encoder) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)  # lexical only: no writer has embedded anything yet
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            warnings = semantic_warnings(reader, view)
            assert [w.code for w in warnings] == ["SEMANTIC_OFF"]  # nothing computes them: say what would
            assert warnings[0].message.startswith("embeddings cover 0% of notes (0 of 16) and no process")
            assert "'vault-agent index --embed'" in warnings[0].message
            assert semantic_search(reader, view, "anything", 5) is None
        with Writer(settings, watch=False):
            assert wait_until(lambda: fully_embedded(settings))
        with reader.acquire() as view:
            assert semantic_warnings(reader, view) == []
            assert semantic_search(reader, view, "anything", 5) is not None
    finally:
        reader.close()


def test_rrf_lifts_a_note_found_by_both_lists() -> None:
    lexical = [("a.md", 1, 9.0), ("b.md", 2, 5.0), ("c.md", 0, 1.0)]
    semantic = [("c.md", 0, 0.9), ("d.md", 0, 0.85), ("b.md", 0, 0.8)]
    fused = [h.hit for h in rrf(lexical, semantic, 4)]
    # c: 1/63 + 1/61 > b: 1/62 + 1/63 > a: 1/61 > d: 1/62
    assert [(p, o) for p, o, _ in fused] == [("c.md", 0), ("b.md", 2), ("a.md", 1), ("d.md", 0)]
    assert [h.hit for h in rrf(lexical, None, 2)] == [
        (p, o, round(1 / (RRF_K + 1 + i), 6)) for i, (p, o, _) in enumerate(lexical[:2])
    ]
    assert rrf(lexical, semantic, 0) == []


def test_passages_are_a_notes_windows_cut_in_the_models_tokens(encoder: Encoder) -> None:
    paths = ["a.md"] * 4 + ["b.md", "c.md"]
    heads = [None, ["Intro"], ["Intro", "Details"], ["Intro"], ["B"], None]
    english = "The garden needs water at dawn and shade at noon. " * 60
    chinese = "花园在清晨需要浇水，中午需要遮阴。" * 60
    texts = ["opening words", "intro text", "the details", english, chinese, "   "]
    titles: dict[str, str | None] = {"a.md": "Alpha", "b.md": "Beta"}
    ps = passages_from_chunks(paths, [0, 1, 2, 3, 0, 0], heads, texts, titles)
    # WINDOWS windows a note (c.md has no text); each points at the chunk it starts in
    assert WINDOWS == 2
    assert [(p.path, p.chunk_ordinal) for p in ps] == [("a.md", 0), ("a.md", 3), ("b.md", 0), ("b.md", 0)]
    assert ps[0].text.startswith("Alpha\nIntro · Details\nopening words intro text the details The garden")
    assert ps[1].text.startswith("Alpha\n") and "garden" in ps[1].text  # later windows: headed by the title
    assert ps[2].text.startswith("Beta\nB\n花园") and ps[3].text.startswith("Beta\n")
    for p in (ps[0], ps[2]):  # cut in the model's tokens, not characters: Chinese fits fewer
        assert PASSAGE_TOKENS - 8 <= encoder.count_tokens(p.text) <= PASSAGE_TOKENS
    assert len(ps[0].text) > 2 * len(ps[2].text)
    assert len({p.text_sha for p in ps}) == len(ps)
    # the same chunks give the same passages (their sha keys the vectors); a short note has one
    assert passages_from_chunks(paths, [0, 1, 2, 3, 0, 0], heads, texts, titles) == ps
    short = passages_from_chunks(["s.md"], [0], [None], ["a few words"], {"s.md": "Short"})
    assert [p.text for p in short] == ["Short\na few words"]
