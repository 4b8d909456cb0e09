"""The row-group postings reader agrees with the `terms` view, tombstones included."""

from __future__ import annotations

from pathlib import Path

from vault_agent.indexer.build import build_index
from vault_agent.query.bm25 import bm25, chunk_map, corpus_stats, postings_index
from vault_agent.query.postings import SegmentTerms

from .conftest import make_ctx
from .vaultgen import write_vault


def test_row_groups_for_a_term_use_the_minimums() -> None:
    seg = SegmentTerms(1, Path("x"), None, ["a", "c", "c", "f", "k"])  # type: ignore[arg-type]
    assert seg.groups_for(["0"]) == []
    assert seg.groups_for(["a"]) == [0]
    assert seg.groups_for(["b"]) == [0]
    assert seg.groups_for(["c"]) == [0, 1, 2]
    assert seg.groups_for(["d", "z"]) == [2, 4]
    assert seg.groups_for(["f"]) == [2, 3]


def test_fast_postings_equal_the_view_after_incremental_updates(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "v")
    ctx = make_ctx(root)
    try:
        (root / "resources" / "guide.md").write_text("# Guide\n\nlamp lamp beacon harbor\n", encoding="utf-8")
        (root / "Home.md").unlink()
        (root / "more.md").write_text("# More\n\nthe beacon and the lamp\n", encoding="utf-8")
        build_index(ctx.settings)
        cache: dict[object, object] = {}
        with ctx.reader.acquire() as view:
            assert len(view.manifest.segments) >= 2
            stats = corpus_stats(view.con, cache, view.manifest.snapshot_id)
            index = postings_index(ctx.reader, view, cache)
            assert index is not None
            chunks = chunk_map(ctx.reader, view, cache)
            assert chunks is not None and (chunks.count, chunks.avg) == stats
            for terms in (["lamp"], ["beacon", "harbor"], ["灯台"], ["keeper", "log", "glass"], ["zeppelin"]):
                fast = bm25(view.con, terms, 50, stats, index)
                assert fast == bm25(view.con, terms, 50, stats, None)
                assert bm25(view.con, terms, 50, stats, index, chunks) == fast
                assert all(path != "Home.md" for path, _, _ in fast)
    finally:
        ctx.reader.close()
