"""The engine's stored hit details and its per-commit work: details equal the snapshot's
tables, an unchanged engine keeps its frozen dir, many small commits (background merges)
each freeze a complete view, an old index layout is incompatible until rebuilt."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vault_agent.contracts import SCHEMA_VERSION
from vault_agent.errors import IndexIncompatible
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import Indexer, build_index
from vault_agent.indexer.lock import WriterLock
from vault_agent.query import search as search_mod
from vault_agent.query.search_engine import open_engine
from vault_agent.search_fields import SEARCH_DIR, WORK_DIR

from .conftest import make_ctx
from .golden import call

WORDS = ["harbor", "beacon", "ledger", "lantern", "pipeline", "roadmap", "parser", "watcher"]


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def _vault(root: Path) -> Path:
    for i in range(24):
        w = WORDS[i % len(WORDS)]
        body = f"# Note {i}\n\nintro {w} text\n\n## Part {w}\n\n{w} {WORDS[(i + 3) % 8]} detail {i}\n"
        front = f"---\ntitle: Plan {i}\n---\n" if i % 5 == 0 else ""
        _write(root, f"d{i % 3}/n{i:02d}.md", front + body)
    _write(root, "empty/Only Name.md", "")
    _write(root, "empty/Lines Only.md", "\n\n\n")
    return root


@pytest.mark.parametrize("group", ["chunk", "note"])
def test_stored_details_equal_the_snapshot_tables(tmp_path: Path, group: str) -> None:
    ctx = make_ctx(_vault(tmp_path / "v"))
    try:
        with ctx.reader.acquire() as view:
            for q in [*WORDS, "plan", "only name", "lines only", "harbor ledger", "part beacon"]:
                terms = search_mod.query_terms(q)
                request = search_mod.RankRequest(q, terms, 50, "lexical", group, details=True)
                ranking = search_mod.ranked_hits(ctx.reader, view, request)
                hits, stored = ranking.hits, ranking.details
                assert hits and set(stored) == {(p, o) for p, o, _ in hits}
                from_engine = search_mod.hit_details(view, hits, stored)
                from_tables = search_mod.hit_details(view, hits)
                assert [list(map(_plain, d)) for d in from_engine] == [
                    list(map(_plain, d)) for d in from_tables
                ]
    finally:
        ctx.reader.close()


def _plain(value: object) -> object:
    return list(value) if isinstance(value, (list, tuple)) else value


def _commit_nothing(index_dir: Path, vault: Path) -> tuple[str | None, str | None]:
    """A snapshot with the same notes (what compaction and the embedder commit)."""
    from vault_agent.config import Settings

    lock = WriterLock(index_dir)
    lock.acquire()
    try:
        idx = Indexer(Settings(vault=vault, index_dir=index_dir))
        idx.load()
        assert idx.manifest is not None
        before = idx.manifest.search_index
        m = idx.commit_snapshot(idx.manifest.segments, idx.manifest.applied_seq, idx.manifest.skipped)
        return before, m.search_index
    finally:
        lock.release()


def test_a_commit_without_engine_changes_keeps_the_frozen_dir(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    ctx = make_ctx(root)
    try:
        index_dir = Path(ctx.settings.index_dir)
        first = call(ctx, "search", {"query": "harbor"})
        before, after = _commit_nothing(index_dir, root)
        assert before is not None and after == before
        m = read_current_manifest(index_dir)
        assert m is not None and m.search_index == before and m.snapshot_id > 1
        assert call(ctx, "search", {"query": "harbor"})["data"] == first["data"]
        # an edit afterwards freezes a new dir again
        _write(root, "d0/n00.md", "# Note 0\n\nkestrel only\n")
        build_index(ctx.settings)
        m2 = read_current_manifest(index_dir)
        assert m2 is not None and m2.search_index != before
        assert [r["path"] for r in call(ctx, "search", {"query": "kestrel"})["data"]["results"]] == [
            "d0/n00.md"
        ]
    finally:
        ctx.reader.close()


def test_many_small_commits_each_freeze_a_complete_view(tmp_path: Path) -> None:
    """One engine writer stays open across commits and merges in the background; every
    snapshot's frozen dir still opens on its own and answers that snapshot's text."""
    from vault_agent.config import Settings

    root = _vault(tmp_path / "v")
    settings = Settings(vault=root, index_dir=root / ".vault-agent")
    build_index(settings, full=True)
    index_dir = Path(settings.index_dir)
    lock = WriterLock(index_dir)
    lock.acquire()
    frozen: list[tuple[str, str]] = []
    try:
        idx = Indexer(settings)
        idx.load()
        for i in range(30):  # enough one-note segments for tantivy's merge policy to merge
            token = f"zq{i:03d}x"
            _write(root, f"d1/edit{i:02d}.md", f"# Edit {i}\n\n{token} marker\n")
            idx.catch_up()
            assert idx.manifest is not None and idx.manifest.search_index
            frozen.append((idx.manifest.search_index, token))
        work = index_dir / SEARCH_DIR / WORK_DIR
        managed = set(json.loads((work / ".managed.json").read_text(encoding="utf-8")))
        meta = json.loads((work / "meta.json").read_text(encoding="utf-8"))
        seg_ids = {s["segment_id"].replace("-", "") for s in meta["segments"]}
        stray = [
            n
            for n in os.listdir(work)
            if not n.startswith(".")
            and n != "meta.json"
            and n not in managed
            and n.split(".")[0] not in seg_ids
        ]
        assert stray == []  # restored files merged away are pruned
    finally:
        lock.release()
    for i, (name, _token) in enumerate(frozen):
        _, searcher = open_engine(index_dir, name)
        for j, (_, other) in enumerate(frozen):
            n = searcher.doc_freq("body", other)
            assert n == (1 if j <= i else 0), (i, j)
        assert searcher.num_docs >= 26


def test_an_index_of_the_previous_layout_is_incompatible_until_rebuilt(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    ctx = make_ctx(root)
    try:
        index_dir = Path(ctx.settings.index_dir)
        current = read_current_manifest(index_dir)
        assert current is not None and SCHEMA_VERSION == 6
        path = index_dir / "snapshots" / f"manifest-{current.snapshot_id}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["schema_version"] = 2  # engine documents without stored details (and no props table)
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(IndexIncompatible):
            call(ctx, "search", {"query": "harbor"})
        build_index(ctx.settings)  # the writer rebuilds an incompatible index
        m = read_current_manifest(index_dir)
        assert m is not None and m.schema_version == SCHEMA_VERSION
        body = call(ctx, "search", {"query": "harbor"})
        assert body["data"]["results"] and body["data"]["results"][0]["snippet"]
    finally:
        ctx.reader.close()


def test_a_second_indexer_in_the_process_takes_over_the_engine_writer(tmp_path: Path) -> None:
    from vault_agent.config import Settings

    root = _vault(tmp_path / "v")
    settings = Settings(vault=root, index_dir=root / ".vault-agent")
    build_index(settings, full=True)
    first = Indexer(settings)
    first.load()
    _write(root, "a.md", "# A\n\nosprey\n")
    lock = WriterLock(settings.index_dir)
    lock.acquire()
    try:
        first.catch_up()  # leaves its engine writer open (merges in the background)
        second = Indexer(settings)
        second.load()  # restores work/ from CURRENT: the first's writer is closed first
        _write(root, "b.md", "# B\n\nosprey too\n")
        second.catch_up()
    finally:
        lock.release()
    ctx = make_ctx(root, index=False)
    try:
        hits = [r["path"] for r in call(ctx, "search", {"query": "osprey"})["data"]["results"]]
        assert sorted(hits) == ["a.md", "b.md"]
    finally:
        ctx.reader.close()
