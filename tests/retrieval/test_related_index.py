"""`related` without table scans (`query/related_index.py`) agrees with the SQL it replaced,
on every note, after a full build and after incremental commits that add segments and
tombstone rows (the per-snapshot document frequencies are then derived, not rebuilt)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vault_agent.indexer.build import build_index
from vault_agent.linkpaths import LinkResolver
from vault_agent.query.related import TOP_TERMS, _links, _shared_tags, _top_terms, path_index
from vault_agent.query.related_index import link_keys, note_keys

from .conftest import make_ctx
from .vaultgen import FILES, write_vault

# The SQL `related` ran before (the oracle): links both ways, shared tags, the note's top terms.
OUT_SQL = "SELECT target, kind FROM links WHERE path = ? ORDER BY ordinal"
IN_SQL = "SELECT path, target, kind FROM links WHERE path <> ? ORDER BY path, ordinal"
TAGS_SQL = (
    "SELECT path, list_intersect(tags, ?::VARCHAR[]) FROM notes WHERE path <> ? "
    "AND len(list_intersect(tags, ?::VARCHAR[])) > 0"
)
TERMS_SQL = (
    "WITH mine AS (SELECT term, sum(tf) AS tf FROM terms WHERE path = ? GROUP BY term), "
    "df AS (SELECT term, count(*) AS df FROM terms WHERE term IN (SELECT term FROM mine) GROUP BY term) "
    "SELECT term FROM mine JOIN df USING (term) WHERE length(term) > 1 "
    "ORDER BY mine.tf * ln(1 + (?::DOUBLE - df + 0.5) / (df + 0.5)) DESC, term LIMIT ?"
)

EXTRA = {
    "graph/hub.md": "# Hub\n[[spoke-a]] [[Spoke-B|b]] [c](spoke%20c.md) [[./spoke-a.md#top]] [[graph/./spoke-a]]\n#hubtag",
    "graph/spoke-a.md": "---\ntags: [graph, shared]\n---\nBack to [[HUB]] and [[graph/hub.md]].\n",
    "graph/Spoke-B.md": "---\ntags: [graph]\n---\nSee [hub](../graph/hub.md) and [[missing]].\n",
    "graph/spoke c.md": "---\ntags: [shared]\n---\n[[hub|the hub]] [[hub\\|escaped]] [[HUB.MD]] [[STRASSE]]\n",
    "other/hub.md": "# Another hub\n[[spoke-a]]\n",
    "other/straße.md": "Links to [[STRASSE]] and [[graph/Hub]].\n",
}


def _oracle(ctx: Any, me: str) -> tuple[list[str], list[str], dict[str, list[str]], list[str]]:
    reader = ctx.reader
    with reader.acquire() as view:
        con = view.con
        idx = LinkResolver(p for (p,) in con.execute("SELECT path FROM notes ORDER BY path").fetchall())
        outgoing: list[str] = []
        for target, kind in con.execute(OUT_SQL, [me]).fetchall():
            hit = idx.resolve(target or "", me, kind == "markdown")
            if hit is not None and hit[0] not in outgoing:
                outgoing.append(hit[0])
        incoming = sorted(
            {
                src
                for src, target, kind in con.execute(IN_SQL, [me]).fetchall()
                if (hit := idx.resolve(target or "", src, kind == "markdown")) is not None and hit[0] == me
            }
        )
        (my_tags,) = con.execute("SELECT tags FROM notes WHERE path = ?", [me]).fetchone() or ([],)
        shared = {}
        if my_tags:
            for p, tags in con.execute(TAGS_SQL, [my_tags, me, my_tags]).fetchall():
                shared[p] = sorted(set(tags))
        (chunks,) = con.execute("SELECT count(*) FROM chunks").fetchone() or (0,)
        terms = [t for (t,) in con.execute(TERMS_SQL, [me, chunks, TOP_TERMS]).fetchall()]
    return outgoing, incoming, shared, terms


def _new(
    ctx: Any, me: str, cache: dict[Any, Any]
) -> tuple[list[str], list[str], dict[str, list[str]], list[str]]:
    reader = ctx.reader
    with reader.acquire() as view:
        idx = path_index(view, cache)
        outgoing, incoming = _links(view, Path(reader.settings.index_dir), cache, me, idx)
        chunks = view.live.chunk_count()  # what related uses: the live chunks, as the SQL counts them
        assert (chunks,) == view.con.execute("SELECT count(*) FROM chunks").fetchone()
        terms = list(_top_terms(view, Path(reader.settings.index_dir), cache, me, chunks))
        return outgoing, incoming, _shared_tags(view, me), terms


def _all_notes(ctx: Any) -> list[str]:
    with ctx.reader.acquire() as view:
        return [p for (p,) in view.con.execute("SELECT path FROM notes ORDER BY path").fetchall()]


def _compare(ctx: Any, cache: dict[Any, Any]) -> int:
    notes = _all_notes(ctx)
    for me in notes:
        assert _new(ctx, me, cache) == _oracle(ctx, me), me
    return len(notes)


def test_related_pieces_equal_the_sql_across_incremental_commits(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "vault", {**FILES, **EXTRA})
    ctx = make_ctx(root)
    cache: dict[Any, Any] = {}
    try:
        assert _compare(ctx, cache) > 10
        (root / "graph/hub.md").write_text(
            "# Hub\nOnly [[spoke c]] now; more words about lamps and beacons.\n"
        )
        (root / "graph/spoke-a.md").unlink()
        (root / "graph/new.md").write_text(
            "---\ntags: [shared, graph]\n---\n[[hub]] [[Spoke-B]] beacon lamp\n"
        )
        build_index(ctx.settings)  # a new segment; the old rows of hub.md and spoke-a.md are dead
        _compare(ctx, cache)
        derived = [k for k in cache if isinstance(k, tuple) and k[:1] == ("related_df",)]
        assert len(derived) == 2  # the second snapshot's frequencies came from the first's
        (root / "other/hub.md").write_text("# Another hub, renamed words\n[[new]]\n")
        build_index(ctx.settings)
        _compare(ctx, cache)
    finally:
        ctx.reader.close()


def test_a_fresh_cache_gives_the_same_frequencies_as_a_derived_one(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "vault", {**FILES, **EXTRA})
    ctx = make_ctx(root)
    try:
        derived: dict[Any, Any] = {}
        _compare(ctx, derived)
        (root / "graph/hub.md").write_text("# Hub rewritten\nlighthouse lamp lamp lamp\n")
        build_index(ctx.settings)
        notes = _all_notes(ctx)
        fresh: dict[Any, Any] = {}
        assert [_new(ctx, n, derived) for n in notes] == [_new(ctx, n, fresh) for n in notes]
    finally:
        ctx.reader.close()


@pytest.mark.parametrize(
    ("target", "keys"),
    [
        ("Note", {"note"}), (" a/B.md ", {"b.md"}), ("a/b/", {"b"}), ("a/./b", {"b"}), ("a/b/..", {"a"}),
        ("..", set()), ("", set()), ("/x", {"x"}), ("STRASSE", {"strasse"}),
    ],
)  # fmt: skip
def test_link_keys_are_the_names_a_target_can_resolve_to(target: str, keys: set[str]) -> None:
    assert link_keys(target) == keys


def test_note_keys() -> None:
    assert note_keys("a/Straße.MD") == {"strasse.md", "strasse"}
    assert note_keys("a/b.txt") == {"b.txt"}
