"""Ranked search on the full-text engine: names find notes, CJK questions, snapshot
consistency, a missing engine dir, group/mode params, and arbitrary input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_agent.api.operation import AppContext
from vault_agent.errors import IndexIncompatible, VaultAgentError
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.snapshot import GarbageCollector
from vault_agent.query import search as search_mod

from .conftest import make_ctx
from .golden import call

REPO = Path(__file__).resolve().parents[2]
CJK = REPO / "fixtures" / "search_cjk"


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def _paths(ctx: AppContext, q: str, **kw: object) -> list[str]:
    body = call(ctx, "search", {"query": q, "limit": 10, **kw})
    return [r["path"] for r in body["data"]["results"]]


@pytest.fixture(scope="module")
def names_ctx(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("names") / "v"
    filler = "The lamp and the glass are checked. " * 5
    for i in range(30):
        _write(root, f"log/day {i:02d}.md", f"# Day {i}\n\n{filler} harbor beacon report {i}\n")
    _write(root, "people/Ada Quill.md", "# Notes\n\nMet at the harbor.\n")
    _write(root, "x/frontmatter-title.md", "---\ntitle: Winter Rotation Plan\n---\nbody words only\n")
    _write(root, "x/aliased.md", "---\naliases: [Night Watch]\n---\nshift list\n")
    _write(root, "empty/Only Name.md", "")
    c = make_ctx(root)
    yield c
    c.reader.close()


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("Ada Quill", "people/Ada Quill.md"),  # file name
        ("winter rotation plan", "x/frontmatter-title.md"),  # frontmatter title
        ("night watch", "x/aliased.md"),  # alias
        ("only name", "empty/Only Name.md"),  # a note without chunks
    ],
)
def test_a_notes_name_finds_it_first(names_ctx: AppContext, query: str, path: str) -> None:
    assert _paths(names_ctx, query)[0] == path


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("Ada Qill", "people/Ada Quill.md"),  # a letter dropped
        ("wintr rotaiton plan", "x/frontmatter-title.md"),  # dropped, swapped
        ("nihgt watch", "x/aliased.md"),  # an alias, letters swapped
    ],
)
def test_a_name_with_a_typo_still_finds_the_note(names_ctx: AppContext, query: str, path: str) -> None:
    assert _paths(names_ctx, query)[0] == path


def test_known_words_never_go_fuzzy(names_ctx: AppContext) -> None:
    # "lamb" is one edit from the filler's "lamp", but a word the index does not hold only
    # matches names fuzzily, and "beacon" is known: the notes holding it, no fuzzy extras.
    assert _paths(names_ctx, "lamb") == []
    assert all(p.startswith("log/") for p in _paths(names_ctx, "beacon"))


def test_group_note_gives_one_hit_per_note(names_ctx: AppContext) -> None:
    paths = _paths(names_ctx, "harbor beacon", group="note")
    assert len(paths) == len(set(paths)) == 10


def test_semantic_without_embeddings_answers_lexical_with_a_warning(names_ctx: AppContext) -> None:
    # Built by `index`, served without a writer: nothing computes embeddings, and every
    # answer says so and what would (SEMANTIC_OFF); when semantic ranking was wanted (any
    # mode but lexical), that the answer is lexical.
    for mode in ("semantic", "hybrid", None):
        body = call(names_ctx, "search", {"query": "Ada Quill"} | ({"mode": mode} if mode else {}))
        assert body["data"]["mode"] == "lexical"
        assert [w["code"] for w in body["warnings"]] == ["SEMANTIC_OFF"]
        assert body["warnings"][0]["message"].endswith("; this answer is lexical")
        assert body["data"]["results"][0]["path"] == "people/Ada Quill.md"
    body = call(names_ctx, "search", {"query": "Ada Quill", "mode": "lexical"})
    assert [w["code"] for w in body["warnings"]] == ["SEMANTIC_OFF"]
    assert not body["warnings"][0]["message"].endswith("; this answer is lexical")


def test_bad_mode_or_group_is_invalid_parameter(names_ctx: AppContext) -> None:
    for raw in ({"mode": "fuzzy"}, {"group": "folder"}):
        with pytest.raises(VaultAgentError) as exc:
            call(names_ctx, "search", {"query": "x", **raw})
        assert exc.value.code == "INVALID_PARAMETER"


def test_answers_are_byte_stable(names_ctx: AppContext) -> None:
    a = call(names_ctx, "search", {"query": "lamp glass", "limit": 50})
    b = call(names_ctx, "search", {"query": "lamp glass", "limit": 50})
    assert json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)
    scores = [(-r["score"], r["path"], r["startLine"]) for r in a["data"]["results"]]
    assert scores == sorted(scores)  # score, then path, then chunk order


def test_cjk_fixture_questions_find_their_notes(tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(CJK / "vault", root)
    ctx = make_ctx(root)
    try:
        queries = json.loads((CJK / "queries.json").read_text(encoding="utf-8"))["queries"]
        for item in queries:
            top = _paths(ctx, item["q"], group="note")[:3]
            assert item["targets"][0] in top, item["q"]
        # The case: a question with no space between Latin and CJK text.
        assert _paths(ctx, "Obsidian 怎么做多栏布局")[0] == "Obsidian如何制作多栏布局.md"
    finally:
        ctx.reader.close()


def test_a_search_during_a_reindex_answers_from_its_snapshot(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _write(root, "a.md", "# A\n\nkestrel nest\n")
    _write(root, "b.md", "# B\n\nheron pond\n")
    ctx = make_ctx(root)
    try:
        with ctx.reader.acquire() as old_view:  # a request pinned before the reindex
            first = search_mod.ranked_hits(
                ctx.reader, old_view, search_mod.RankRequest("pond", ["pond"], 10)
            ).hits
            assert [h[0] for h in first] == ["b.md"]
            (root / "a.md").write_text("# A\n\nheron pond moved here\n", encoding="utf-8")
            (root / "b.md").unlink()
            build_index(ctx.settings, full=True)
            # Even with the old engine dir collected at once (the grace period protects
            # requests that have not opened it yet), the open view keeps answering.
            GarbageCollector(ctx.settings.index_dir, keep=1, grace_s=0).collect(now=1e12)
            hits = search_mod.ranked_hits(
                ctx.reader, old_view, search_mod.RankRequest("kestrel", ["kestrel"], 10)
            ).hits
            assert [h[0] for h in hits] == ["a.md"]
            hits = search_mod.ranked_hits(
                ctx.reader, old_view, search_mod.RankRequest("heron", ["heron"], 10)
            ).hits
            assert [h[0] for h in hits] == ["b.md"]
        assert _paths(ctx, "kestrel") == []
        assert _paths(ctx, "heron") == ["a.md"]
    finally:
        ctx.reader.close()


def test_a_missing_search_index_is_incompatible_until_reindexed(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _write(root, "a.md", "# A\n\nkestrel\n")
    ctx = make_ctx(root)
    try:
        manifest = read_current_manifest(ctx.settings.index_dir)
        assert manifest is not None and manifest.search_index
        shutil.rmtree(Path(ctx.settings.index_dir) / "search" / manifest.search_index)
        with pytest.raises(IndexIncompatible):
            call(ctx, "search", {"query": "kestrel"})
        build_index(ctx.settings)  # the writer sees the broken snapshot and rebuilds
        assert _paths(ctx, "kestrel") == ["a.md"]
    finally:
        ctx.reader.close()


def test_zero_note_vault_answers_empty(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    ctx = make_ctx(root)
    try:
        assert _paths(ctx, "anything") == []
    finally:
        ctx.reader.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.text(min_size=1, max_size=1000),
        st.text(alphabet="的了在是如何怎么 .,!?😀🎉#[]()*:\"'-—", min_size=1, max_size=200),
        st.just("x" * 1000),
        st.just("the a of and to in " * 40),
    )
)
def test_arbitrary_queries_answer_or_fail_clearly(names_ctx: AppContext, q: str) -> None:
    try:
        body = call(names_ctx, "search", {"query": q, "group": "note"})
    except VaultAgentError as exc:
        assert exc.code == "INVALID_PARAMETER", exc.code  # blank or over-long only
        assert not q.strip() or len(q) > 1000
        return
    assert len(body["data"]["results"]) <= 10
