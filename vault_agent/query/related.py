"""`related`: notes related to one note, with the reasons, from the committed snapshot.

Signals and weights (score = sum, rounded to 6 decimals; ties by path):
- links_to (3.0): the note links to it (wikilink, embed or Markdown link);
- linked_from (3.0): it links to the note;
- shared_tags (1.0 per tag shared);
- term_overlap (0..2.0): the note's 10 most distinctive terms (tf · idf over the snapshot's
  live chunks) as one MoreLikeThis-style query of the full-text engine (the snapshot's own,
  the one `search` reads): a should-clause per term on `body`, tantivy's BM25 (stemmed
  terms, its field norms), its top 200 chunks; best chunk per other note, scaled by the
  best note's score. Exact BM25 of those terms over every chunk needs every posting of
  them (~1.9M at 100k notes, ~0.5 s); the engine's block-max WAND top-k skips most of
  them (~10 ms), and agrees with the exact top 10 at Jaccard ~0.86 (docs/benchmarks.md).
Link targets resolve against the snapshot's notes with the one Obsidian resolver
(`vault_agent.linkpaths`, shared with the link rewrite of `vault_move`): exact path,
relative path, then path suffix / bare name, several matches broken as Obsidian does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vault_agent.contracts import Outcome
from vault_agent.linkpaths import LinkResolver
from vault_agent.query.models import Camel
from vault_agent.query.outline import pinned_note
from vault_agent.query.related_index import note_keys, note_term_counts, snapshot_df, snapshot_links
from vault_agent.query.search import check_limit
from vault_agent.query.search_engine import open_engine
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.snapshot_cache import remember
from vault_agent.search_fields import PATH_FIELD, analyze_terms

LINK_WEIGHT = 3.0
TAG_WEIGHT = 1.0
TERM_WEIGHT = 2.0
TOP_TERMS = 10
TERM_POOL = 200  # engine chunks read for term overlap (the note's own among them)
TERM_FIELD = "body"


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


def path_index(view: SnapshotView, cache: dict[Any, Any] | None) -> LinkResolver:
    """The Obsidian link resolver over the snapshot's live notes (cached per snapshot; built
    from the path strings the loaded segments hold, not from a query that copies them)."""
    key = ("related_paths", view.manifest.snapshot_id)
    if cache is not None and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    paths = [
        path
        for cols, live in view.live.segment_views()
        for row, path in enumerate(cols.paths)
        if live is None or live[row]
    ]
    idx = LinkResolver(sorted(paths))
    if cache is not None:
        remember(cache, "related_paths", view.manifest.snapshot_id, idx)
    return idx


def _links(
    view: SnapshotView, index_dir: Path, cache: dict[Any, Any], me: str, idx: LinkResolver
) -> tuple[list[str], list[str]]:
    """(notes `me` links to, in its link order; notes linking to `me`, in path order), each once."""
    segments = snapshot_links(index_dir, view, cache)
    found = view.live.lookup(me)
    outgoing: list[str] = []
    for links, cols, _live in segments:
        if found is not None and cols.segment_id == found[0]:
            for target, markdown in links.of_note(cols.row_of[me]):
                hit = idx.resolve(target, me, markdown)
                if hit is not None and hit[0] not in outgoing:
                    outgoing.append(hit[0])
    hashes = [hash(k) for k in note_keys(me)]
    incoming: set[str] = set()
    for links, cols, live in segments:
        for row in links.naming(hashes):
            source_row = int(links.sources[row])
            if live is not None and not live[source_row]:
                continue
            source = cols.paths[source_row]
            if source == me or source in incoming:
                continue
            hit = idx.resolve(str(links.targets[row].as_py()), source, bool(links.markdown[row]))
            if hit is not None and hit[0] == me:
                incoming.add(source)
    return outgoing, sorted(incoming)


def _shared_tags(view: SnapshotView, me: str) -> dict[str, list[str]]:
    """Per other note, the tags it shares with `me` (sorted), from the live tag codes."""
    vocab = view.live.vocab("tags")
    mine: npt.NDArray[np.int32] | None = None
    for cols, live in view.live.segment_views():
        row = cols.row_of.get(me)
        if row is not None and (live is None or live[row]):
            flat = cols.lists["tags"]
            mine = np.unique(flat.codes[flat.rows == row])
            break
    shared: dict[str, list[str]] = {}
    if mine is None or not len(mine):
        return shared
    for cols, live in view.live.segment_views():
        flat = cols.lists["tags"]
        hit = np.isin(flat.codes, mine)
        if live is not None:
            hit &= live[flat.rows]
        rows, codes = flat.rows[hit], flat.codes[hit]
        order = np.lexsort((codes, rows))
        rows, codes = rows[order].tolist(), codes[order].tolist()
        start = 0
        while start < len(rows):  # one run of equal rows per note (its tags once each: parser rule)
            end = start + 1
            while end < len(rows) and rows[end] == rows[start]:
                end += 1
            path = cols.paths[rows[start]]
            if path != me:
                shared[path] = sorted({vocab.name(c) for c in codes[start:end]})
            start = end
    return shared


def _top_terms(
    view: SnapshotView, index_dir: Path, cache: dict[Any, Any], me: str, chunks: int
) -> dict[str, int]:
    """The note's TOP_TERMS most distinctive terms (with their live chunk counts): tf (over
    its chunks) · idf (chunk df), best first, ties by term; one-character terms left out."""
    counts = note_term_counts(view, me)
    if not counts:
        return {}
    live_df, vocab = snapshot_df(index_dir, view, cache)
    n = float(chunks)
    scored: list[tuple[float, str, int]] = []
    for term, tf in counts.items():
        code = vocab.code(term)
        df = int(live_df.df[code]) if code is not None and code < len(live_df.df) else 0
        if df > 0 and len(term) > 1:
            scored.append((-(float(tf) * math.log(1 + (n - df + 0.5) / (df + 0.5))), term, df))
    return {term: df for _, term, df in sorted(scored)[:TOP_TERMS]}


def _term_pool(index_dir: Path, view: SnapshotView, me: str, terms: list[str]) -> dict[str, float]:
    """Per other note, its best chunk's engine score among the top TERM_POOL chunks of a
    should-query of `terms` on the body field (the pinned snapshot's engine dir). The score
    of a note is its best chunk's, whatever order tantivy returns ties in."""
    import tantivy  # lazily, as search_engine does: query-only tools never load it

    stems = analyze_terms(terms)
    if not stems:
        return {}
    index, searcher = open_engine(index_dir, view.manifest.search_index)
    q = tantivy.Query
    query = q.boolean_query(
        [(tantivy.Occur.Should, q.term_query(index.schema, TERM_FIELD, t)) for t in stems]
    )
    best: dict[str, float] = {}
    for score, address in searcher.search(query, TERM_POOL, count=False).hits:
        path = str(searcher.doc(address).get_first(PATH_FIELD))
        if path != me and float(score) > best.get(path, 0.0):
            best[path] = float(score)
    return best


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
    cache = {} if cache is None else cache
    index_dir = Path(reader.settings.index_dir)
    with pinned_note(reader, path, "related", headings=False, structure=False) as pinned:
        view, note = pinned.view, pinned.note
        me = note.path
        idx = path_index(view, cache)
        scores: dict[str, float] = {}
        reasons: dict[str, list[str]] = {}

        def add(p: str, why: str, value: float) -> None:
            if p == me:
                return
            scores[p] = scores.get(p, 0.0) + value
            if why not in reasons.setdefault(p, []):
                reasons[p].append(why)

        outgoing, incoming = _links(view, index_dir, cache, me, idx)
        for hit in outgoing:
            add(hit, "links_to", LINK_WEIGHT)
        for src in incoming:
            add(src, "linked_from", LINK_WEIGHT)
        shared = _shared_tags(view, me)
        for p, common in shared.items():
            add(p, "shared_tags", TAG_WEIGHT * len(common))
        terms = _top_terms(view, index_dir, cache, me, view.live.chunk_count())
        best = _term_pool(index_dir, view, me, list(terms))
        top = max(best.values(), default=0.0)
        for p, s in best.items():
            if top > 0:
                add(p, "term_overlap", TERM_WEIGHT * s / top)
        ranked = sorted(scores, key=lambda p: (-round(scores[p], 6), p))[:size]
        items = [
            RelatedNote(
                path=p,
                title=_title(view, p),
                score=round(scores[p], 6),
                reasons=reasons[p],
                shared_tags=shared.get(p, []),
            )
            for p in ranked
        ]
        data = RelatedData(path=me, related=items, index_freshness=view.freshness)
        return Outcome(data=data, warnings=[*view.warnings(), *note.warnings()], freshness=view.freshness)


def _title(view: SnapshotView, path: str) -> str | None:
    found = view.live.lookup(path)
    return found[1].title if found is not None else None
