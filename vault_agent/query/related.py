"""`related`: notes related to one note, with the reasons, from the committed snapshot.

Signals and weights (score = sum, rounded to 6 decimals; ties by path):
- links_to (3.0): the note links to it (wikilink, embed or Markdown link);
- linked_from (3.0): it links to the note;
- shared_tags (1.0 per tag shared);
- term_overlap (0..2.0): BM25 of the note's 10 most distinctive terms (tf · idf) against
  the other notes' chunks, best chunk per note, scaled by the best note's score.
Link targets resolve against the snapshot's notes with the one Obsidian resolver
(`vault_agent.linkpaths`, shared with the link rewrite of `vault_move`): exact path,
relative path, then path suffix / bare name, several matches broken as Obsidian does.
"""

from __future__ import annotations

from typing import Any

import duckdb

from vault_agent.contracts import Outcome
from vault_agent.linkpaths import LinkResolver
from vault_agent.query.bm25 import bm25, chunk_map, corpus_stats, postings_index
from vault_agent.query.models import Camel
from vault_agent.query.outline import pinned_note
from vault_agent.query.search import check_limit
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.snapshot_cache import remember

LINK_WEIGHT = 3.0
TAG_WEIGHT = 1.0
TERM_WEIGHT = 2.0
TOP_TERMS = 10
TERM_POOL = 200


class RelatedNote(Camel):
    path: str
    title: str | None
    score: float
    reasons: list[str]
    shared_tags: list[str]


class RelatedData(Camel):
    path: str
    related: list[RelatedNote]
    index_freshness: str


def path_index(con: duckdb.DuckDBPyConnection, cache: dict[Any, Any] | None, snapshot_id: int) -> LinkResolver:
    """The Obsidian link resolver over the snapshot's notes (cached per snapshot)."""
    key = ("related_paths", snapshot_id)
    if cache is not None and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    idx = LinkResolver(p for (p,) in con.execute("SELECT path FROM notes ORDER BY path").fetchall())
    if cache is not None:
        remember(cache, "related_paths", snapshot_id, idx)
    return idx


def related(
    reader: SnapshotReader, path: object, limit: int | None = None, cache: dict[Any, Any] | None = None
) -> Outcome[RelatedData]:
    """Notes related to one note by links both ways, shared tags and term overlap.

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound: a bad path or name (outline.pinned_note).
        InvalidLimit: limit outside 1–50.
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    size = check_limit(limit)
    with pinned_note(reader, path, "related", headings=False, structure=False) as pinned:
        view, note = pinned.view, pinned.note
        con = view.con
        me = note.path
        table = view.segment_table("notes", note.segment_id)
        tags_row = con.execute(f"SELECT tags FROM {table} WHERE path = ?", [me]).fetchone()
        my_tags = list(tags_row[0] or []) if tags_row else []
        idx = path_index(con, cache, view.manifest.snapshot_id)
        scores: dict[str, float] = {}
        reasons: dict[str, list[str]] = {}
        shared: dict[str, list[str]] = {}

        def add(p: str, why: str, value: float) -> None:
            if p == me:
                return
            scores[p] = scores.get(p, 0.0) + value
            if why not in reasons.setdefault(p, []):
                reasons[p].append(why)

        for target, kind in con.execute(
            "SELECT target, kind FROM links WHERE path = ? ORDER BY ordinal", [me]
        ).fetchall():
            found = idx.resolve(target or "", me, kind == "markdown")
            hit = found[0] if found else None
            if hit and "links_to" not in reasons.get(hit, []):
                add(hit, "links_to", LINK_WEIGHT)
        name = me.rsplit("/", 1)[-1]
        stem = name[:-3] if name.casefold().endswith(".md") else name
        incoming = con.execute(
            "SELECT path, target, kind FROM links WHERE path <> ? AND strpos(lower(target), lower(?)) > 0 "
            "ORDER BY path, ordinal",
            [me, stem],
        ).fetchall()
        for src, target, kind in incoming:
            found = idx.resolve(target or "", src, kind == "markdown")
            if found is not None and found[0] == me and "linked_from" not in reasons.get(src, []):
                add(src, "linked_from", LINK_WEIGHT)
        if my_tags:
            for p, tags in con.execute(
                "SELECT path, list_intersect(tags, ?::VARCHAR[]) FROM notes WHERE path <> ? "
                "AND len(list_intersect(tags, ?::VARCHAR[])) > 0",
                [my_tags, me, my_tags],
            ).fetchall():
                common = sorted(set(tags))
                shared[p] = common
                add(p, "shared_tags", TAG_WEIGHT * len(common))
        stats = corpus_stats(con, cache, view.manifest.snapshot_id)
        terms = [
            t
            for (t,) in con.execute(
                "WITH mine AS (SELECT term, sum(tf) AS tf FROM terms WHERE path = ? GROUP BY term), "
                "df AS (SELECT term, count(*) AS df FROM terms WHERE term IN (SELECT term FROM mine) GROUP BY term) "
                "SELECT term FROM mine JOIN df USING (term) WHERE length(term) > 1 "
                "ORDER BY mine.tf * ln(1 + (?::DOUBLE - df + 0.5) / (df + 0.5)) DESC, term LIMIT ?",
                [me, stats[0], TOP_TERMS],
            ).fetchall()
        ]
        best: dict[str, float] = {}
        index = postings_index(reader, view, cache)
        chunks = chunk_map(reader, view, cache) if index is not None else None
        for hit_path, _, score in bm25(con, terms, TERM_POOL, stats, index, chunks):
            if hit_path != me and hit_path not in best:
                best[hit_path] = score
        top = max(best.values(), default=0.0)
        for p, s in best.items():
            if top > 0:
                add(p, "term_overlap", TERM_WEIGHT * s / top)
        ranked = sorted(scores, key=lambda p: (-round(scores[p], 6), p))[:size]
        titles = dict(
            con.execute(
                "SELECT path, title FROM notes WHERE list_contains(?::VARCHAR[], path)", [ranked]
            ).fetchall()
        )
        items = [
            RelatedNote(
                path=p,
                title=titles.get(p),
                score=round(scores[p], 6),
                reasons=reasons[p],
                shared_tags=shared.get(p, []),
            )
            for p in ranked
        ]
        data = RelatedData(path=me, related=items, index_freshness=view.freshness)
        return Outcome(data=data, warnings=[*view.warnings(), *note.warnings()], freshness=view.freshness)
