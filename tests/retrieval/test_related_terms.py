"""`related`'s term side comes from the full-text engine (a MoreLikeThis-style query of the
note's top terms, its top TERM_POOL chunks), not from an exact BM25 over every posting. What
that answer guarantees, checked on every note of a fixture vault, before and after an
incremental commit that tombstones rows: every `term_overlap` note holds one of the note's
top terms (stemmed as the engine indexes them) in a live chunk; the note never relates to
itself; the term scores are scaled to (0, 2] with the best at 2; the links and shared-tags
parts are the ones the snapshot's links and tags give (test_related_index checks those
pieces against SQL); the order is score then path; and the answer is the same from a fresh
reader and cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_agent.indexer.build import build_index
from vault_agent.query.related import (
    LINK_WEIGHT,
    TAG_WEIGHT,
    TERM_WEIGHT,
    RelatedData,
    _links,
    _shared_tags,
    _top_terms,
    path_index,
    related,
)
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.search_fields import analyze_terms
from vault_agent.text import tokenize

from .conftest import make_ctx
from .vaultgen import FILES, write_vault

EXTRA = {
    "sea/lighthouse.md": "---\ntags: [sea]\n---\n# Lighthouse\nThe keeper trims the lamp; the beacon turns all night.\n",
    "sea/keeper.md": "---\ntags: [sea, people]\n---\nA keeper's log: lamp oil, beacon lens, [[lighthouse]].\n",
    "sea/harbor.md": "# Harbor\nBoats, nets and the harbor master. A lamp by the pier.\n",
    "sea/storm.md": "Storm notes: the beacon failed, the keepers trimmed lamps by hand.\n## Later\nCalm.\n",
    "land/farm.md": "---\ntags: [people]\n---\nWheat, barley and a tractor; nothing about the sea.\n",
}


def _live_stems(ctx: Any) -> dict[str, set[str]]:
    """Per note, the engine stems of its live chunks' words (independent of `related`)."""
    with ctx.reader.acquire() as view:
        rows = view.con.execute("SELECT path, text FROM chunks").fetchall()
    out: dict[str, set[str]] = {}
    for path, text in rows:
        out.setdefault(path, set()).update(analyze_terms(tokenize(text or "")))
    return out


def _check_every_note(ctx: Any) -> int:
    stems = _live_stems(ctx)
    index_dir = Path(ctx.settings.index_dir)
    cache: dict[Any, Any] = {}
    checked = 0
    for me in sorted(stems):
        data: RelatedData = related(ctx.reader, me, 50, cache).data
        with ctx.reader.acquire() as view:
            idx = path_index(view, cache)
            outgoing, incoming = _links(view, index_dir, cache, me, idx)
            shared = _shared_tags(view, me)
            mine = set(analyze_terms(list(_top_terms(view, index_dir, cache, me, view.live.chunk_count()))))
        paths = [r.path for r in data.related]
        assert me not in paths, me
        assert len(paths) == len(set(paths)), me
        assert [(-r.score, r.path) for r in data.related] == sorted(
            (-r.score, r.path) for r in data.related
        ), me
        term_parts = []
        for r in data.related:
            link_part = LINK_WEIGHT * ((r.path in outgoing) + (r.path in incoming))
            tag_part = TAG_WEIGHT * len(shared.get(r.path, []))
            assert r.shared_tags == shared.get(r.path, []), (me, r.path)
            assert ("links_to" in r.reasons) == (r.path in outgoing), (me, r.path)
            assert ("linked_from" in r.reasons) == (r.path in incoming), (me, r.path)
            assert ("shared_tags" in r.reasons) == bool(r.shared_tags), (me, r.path)
            term = round(r.score - link_part - tag_part, 6)
            if "term_overlap" in r.reasons:
                assert mine & stems.get(r.path, set()), (me, r.path, mine)
                assert 0 < term <= TERM_WEIGHT, (me, r.path, term)
                term_parts.append(term)
                checked += 1
            else:
                assert term == 0, (me, r.path, term)
        if term_parts and len(data.related) < 50:  # the best term note is listed: scaled to 2
            assert max(term_parts) == TERM_WEIGHT, me
    return checked


def test_the_engine_term_side_keeps_its_guarantees_across_commits(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "vault", {**FILES, **EXTRA})
    ctx = make_ctx(root)
    try:
        assert _check_every_note(ctx) > 10
        (root / "sea/harbor.md").write_text("# Harbor\nOnly boats and nets now.\n")  # its lamp is gone
        (root / "sea/storm.md").unlink()
        (root / "land/barn.md").write_text("A barn with a lamp and a beacon on the roof, [[farm]].\n")
        build_index(ctx.settings)  # a new segment; the old rows of harbor.md and storm.md are dead
        assert _check_every_note(ctx) > 10
        answer = related(ctx.reader, "sea/lighthouse.md", 50).data
        term_notes = {r.path for r in answer.related if "term_overlap" in r.reasons}
        assert "land/barn.md" in term_notes and "sea/storm.md" not in term_notes
        assert "sea/harbor.md" not in term_notes  # only its dead chunk held "lamp"
    finally:
        ctx.reader.close()


def test_answers_are_deterministic_across_readers_and_caches(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "vault", {**FILES, **EXTRA})
    ctx = make_ctx(root)
    other = SnapshotReader(ctx.settings, ctx.vault, freshness=lambda _m: "fresh")
    try:
        with ctx.reader.acquire() as view:
            notes = [p for (p,) in view.con.execute("SELECT path FROM notes ORDER BY path").fetchall()]
        shared_cache: dict[Any, Any] = {}
        for me in notes:
            first = related(ctx.reader, me, 20, shared_cache).data.model_dump_json()
            assert related(ctx.reader, me, 20, shared_cache).data.model_dump_json() == first, me
            assert related(other, me, 20, {}).data.model_dump_json() == first, me
    finally:
        other.close()
        ctx.reader.close()
