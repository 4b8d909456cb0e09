"""The reader's side of the full-text engine: open a snapshot's frozen engine dir, rank chunks.

A snapshot's manifest names its engine dir (`search_index`, see indexer/search_index.py);
this module opens only that dir, with manual reloads, so every search is answered from the
snapshot the request pinned, however the writer moves on. Opened dirs are shared by the
process (they are immutable) and only the newest few stay open.

Ranking (query side of search_fields.py):
- every distinct query token is a should-clause in each field, boosted by the field's
  boost (BM25 per field, summed: a token found in the title and the body counts twice);
- proximity: each pair of adjacent query tokens is a phrase (slop 1) in body, title and
  headings with PAIR_BOOST, except in a field where one of the two tokens is in more than
  PHRASE_MAX_DF chunks (a cost bound: reading ~200k chunks' positions takes ~100 ms; small
  vaults never reach it). For CJK, adjacent bigrams ("安卓", "卓手") match only where the
  longer run ("安卓手") occurs, which lifts the note that holds the question's content
  words above notes that share only function-word bigrams ("如何", "在安");
- function bigrams: a CJK query bigram holding a particle, preposition or question word
  (FUNCTION_CHARS, QUESTION_BIGRAMS) counts as common, and a pair of two such tokens gets
  no proximity clause;
- typos: a query token that no field holds matches the name fields fuzzily
  (fuzzy_name_clauses: "Warm COINBSE" finds "Warm COINBASE");
- common tokens: a token held by more than COMMON_DF_RATIO of the chunks keeps only
  COMMON_WEIGHT of its weight in body and headings while the query has rarer tokens (name
  fields keep full weight: "Book Template" must find the note of that name) (BM25's idf alone lets many
  such bigrams in a long CJK question outvote its few content words).
Hits come back as (path, chunk ordinal, score) with scores rounded to 6 decimals and ties
broken by path, then ordinal, so answers are byte-stable for a snapshot.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from vault_agent.contracts import Manifest
from vault_agent.errors import IndexIncompatible
from vault_agent.search_fields import (
    DETAIL_FIELD,
    FIELD_BOOSTS,
    NAME_FIELDS,
    ORDINAL_FIELD,
    PATH_FIELD,
    SEARCH_DIR,
    analyze_terms,
    register,
)

PAIR_BOOST = 0.6
PAIR_FIELDS: dict[str, float] = {"body": 1.0, "title": 2.0, "headings": 1.0}
COMMON_DF_RATIO = 0.05
COMMON_WEIGHT = 0.25
PHRASE_MAX_DF = 20_000  # chunks: above it a phrase's positions cost ~100 ms (100k notes)
OPEN_KEPT = 4
# CJK function words (particles, prepositions, question words): a query bigram that holds
# one is weighted like a common token. Content words rarely straddle them, and a long
# natural-language question is mostly made of them ("如何在安卓手机上用Git同步仓库").
FUNCTION_CHARS = frozenset(
    "的了在是和与把被从向到用让给也都就还吗呢吧啊么着过上里中时个这那哪谁怎"
    "をはがのにでともへやかねよなて"
    "은는이가을를의에서도로와과"
)
QUESTION_BIGRAMS = frozenset(
    {
        "如何",
        "怎么",
        "怎样",
        "什么",
        "为什",
        "可以",
        "是否",
        "能否",
        "一下",
        "想知",
        "知道",
        "我想",
        "请问",
        "どう",
        "ですか",
        "ますか",
    }
)
TIE_BREAKER: float | None = None
# Typos in a name: a query token no field of the index holds ("COINBSE", "limt") also
# matches the name fields' tokens within FUZZY_DISTANCE edits (2 from FUZZY_LONG chars),
# each such match weighing FUZZY_WEIGHT of the field's boost. Tokens the index holds never
# go fuzzy, so a correctly spelled query costs nothing more and ranks as before.
FUZZY_MIN_CHARS = 4
FUZZY_LONG = 8
FUZZY_WEIGHT = 0.5
FUZZY_FIELDS: tuple[str, ...] = ("title", "aliases", "filename")
FUZZY_MAX_TERMS = 4  # a bound on the automata a long query of unknown words builds
FETCH_MIN = 50
RERANK_POOL = 200  # term hits that proximity may reorder (4x the usual fetch)
PHRASE_POOL = 2000  # proximity hits read to find the pooled ones' bonuses

_OPEN: OrderedDict[str, Any] = OrderedDict()
_OPEN_LOCK = threading.Lock()
_PRELOADERS: dict[Path, _Preloader] = {}


class _Preloader:
    """Opens a new snapshot's engine dir before the writer publishes it (publish.py), so the
    first search after a commit finds its searcher ready. Registered by the first search of
    a state dir in this process (a writer process that serves searches)."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir

    def on_publish(self, manifest: Manifest) -> None:
        if manifest.search_index:
            open_engine(self.index_dir, manifest.search_index)


def _preload_for(index_dir: Path) -> None:
    from vault_agent.publish import add_publish_listener

    key = Path(index_dir)
    with _OPEN_LOCK:
        if key in _PRELOADERS:
            return
        _PRELOADERS[key] = preloader = _Preloader(key)
    add_publish_listener(key, preloader.on_publish)


def open_engine(index_dir: Path, name: str | None) -> Any:
    """The tantivy Index of a snapshot's frozen engine dir (opened once per process).

    Raises:
        IndexIncompatible: the snapshot has no engine dir, or it cannot be opened.
    """
    import tantivy

    if not name:
        raise IndexIncompatible("the snapshot has no search index; run 'vault-agent reindex'")
    path = str(Path(index_dir) / SEARCH_DIR / name)
    # The meta file's identity goes with the path: a state dir deleted and rebuilt under a
    # running server reuses snapshot ids, never the meta file's inode and mtime. An open
    # dir that GC removed since keeps answering (its files stay mapped).
    try:
        st = os.stat(os.path.join(path, "meta.json"))
        ident: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
    except OSError:
        ident = None
    with _OPEN_LOCK:
        found = _OPEN.get(path)
        if found is not None and (ident is None or found[0] == ident):
            _OPEN.move_to_end(path)
            return found[1]
    if ident is None:
        raise IndexIncompatible("the search index is missing or unreadable; run 'vault-agent reindex'")
    try:
        index = register(tantivy.Index.open(path))
        index.config_reader(reload_policy="manual")
        searcher = index.searcher()
    except (ValueError, OSError) as exc:
        raise IndexIncompatible(
            "the search index is missing or unreadable; run 'vault-agent reindex'"
        ) from exc
    entry = (index, searcher)
    _preload_for(Path(index_dir))
    with _OPEN_LOCK:
        _OPEN[path] = (ident, entry)
        while len(_OPEN) > OPEN_KEPT:
            _OPEN.popitem(last=False)
    return entry


def is_function_bigram(token: str) -> bool:
    """A CJK bigram made of, or straddling, a function word: "如何", "机上", "トを", "在安"."""
    if len(token) != 2 or not ("\u3040" <= token[0] <= "\u9fff" or "\uac00" <= token[0] <= "\ud7af"):
        return False
    return token in QUESTION_BIGRAMS or token[0] in FUNCTION_CHARS or token[1] in FUNCTION_CHARS


def doc_ratios(searcher: Any, terms: list[str]) -> dict[str, float]:
    """Per token: the share of chunks holding it in body or title (the larger)."""
    total = max(1, searcher.num_docs)
    return {t: max(searcher.doc_freq("body", t), searcher.doc_freq("title", t)) / total for t in terms}


def term_weights(searcher: Any, terms: list[str]) -> dict[str, float]:
    """Per analyzed token: COMMON_WEIGHT for a common token or CJK function bigram, else 1
    (all 1 when the query has nothing rarer: plain BM25)."""
    ratios = doc_ratios(searcher, terms)
    weights: dict[str, float] = {}
    for t in terms:
        weights[t] = COMMON_WEIGHT if ratios[t] > COMMON_DF_RATIO or is_function_bigram(t) else 1.0
    if all(w < 1.0 for w in weights.values()):
        weights = dict.fromkeys(weights, 1.0)
    return weights


def term_query(index: Any, searcher: Any, terms: list[str]) -> Any:
    """Per (token, field) should-clauses with the field's boost (see the module doc).

    Only term clauses: then tantivy's top-k runs block-max WAND and skips what cannot reach
    the top; one phrase clause in the same boolean makes it score every matching document
    (55 ms instead of 17 ms for four common words at 100k notes)."""
    import tantivy

    schema = index.schema
    Q, Occur = tantivy.Query, tantivy.Occur
    weights = term_weights(searcher, terms)
    clauses: list[tuple[Any, Any]] = []
    for t in terms:
        per_field = [
            Q.boost_query(
                Q.term_query(schema, field, t, index_option="freq"),
                boost * (1.0 if field in NAME_FIELDS else weights[t]),
            )
            for field, boost in FIELD_BOOSTS.items()
        ]
        if TIE_BREAKER is None:
            clauses.extend((Occur.Should, q) for q in per_field)
        else:
            clauses.append((Occur.Should, Q.disjunction_max_query(per_field, tie_breaker=TIE_BREAKER)))
    clauses.extend((Occur.Should, q) for q in fuzzy_name_clauses(index, searcher, terms))
    return Q.boolean_query(clauses)


def fuzzy_name_clauses(index: Any, searcher: Any, terms: list[str]) -> list[Any]:
    """Fuzzy name-field clauses for the query's unknown alphabetic tokens (module doc)."""
    import tantivy

    Q = tantivy.Query
    out: list[Any] = []
    for t in terms:
        if len(t) < FUZZY_MIN_CHARS or not t.isascii() or not t.isalpha():
            continue  # CJK bigrams, numbers and short words: an edit makes another word
        if any(searcher.doc_freq(field, t) for field in FIELD_BOOSTS):
            continue  # a known token: exact matching only
        if len(out) >= FUZZY_MAX_TERMS * len(FUZZY_FIELDS):
            break
        distance = 2 if len(t) >= FUZZY_LONG else 1
        for field in FUZZY_FIELDS:
            q = Q.fuzzy_term_query(index.schema, field, t, distance=distance, transposition_cost_one=True)
            out.append(Q.boost_query(q, FIELD_BOOSTS[field] * FUZZY_WEIGHT))
    return out


def proximity_query(index: Any, searcher: Any, terms: list[str]) -> Any | None:
    """The adjacent-pair phrase clauses (see the module doc), or None when there are none."""
    import tantivy

    schema = index.schema
    Q, Occur = tantivy.Query, tantivy.Occur
    clauses: list[tuple[Any, Any]] = []
    for a, b in zip(terms, terms[1:], strict=False):
        if is_function_bigram(a) and is_function_bigram(b):
            continue  # "如何" + "何在": a run of function words is no evidence of the topic
        for field, boost in PAIR_FIELDS.items():
            if max(searcher.doc_freq(field, a), searcher.doc_freq(field, b)) > PHRASE_MAX_DF:
                continue  # reading that many positions costs more than the order adds
            q = Q.phrase_query(schema, field, [a, b], slop=1)
            clauses.append((Occur.Should, Q.boost_query(q, PAIR_BOOST * boost)))
    return Q.boolean_query(clauses) if clauses else None


def only_paths(index: Any, query: Any, allowed: frozenset[str] | None) -> Any:
    """`query` restricted to documents of the `allowed` notes (a search filter, applied
    inside the engine so that no allowed hit is lost to the top-k cut); a constant 0 score."""
    if allowed is None or query is None:
        return query
    import tantivy

    Q, Occur = tantivy.Query, tantivy.Occur
    keep = Q.const_score_query(Q.term_set_query(index.schema, PATH_FIELD, sorted(allowed)), 0.0)
    return Q.boolean_query([(Occur.Must, query), (Occur.Must, keep)])


def scored_addresses(
    index: Any, searcher: Any, terms: list[str], fetch: int, allowed: frozenset[str] | None = None
) -> list[tuple[float, Any]]:
    """The best `fetch` (score, address) pairs: term scores plus proximity bonuses.

    Two searches, both pruned: the terms' top RERANK_POOL, then the proximity clauses
    alone (cheap: only documents holding both tokens of a pair); a pooled document's
    score gains its proximity score. A document outside the terms' pool is not lifted in
    by proximity alone (with the pool at 4x the fetch, its term score is far below)."""
    near = only_paths(index, proximity_query(index, searcher, terms), allowed)
    pool = max(fetch, RERANK_POOL) if near is not None else fetch
    hits = searcher.search(
        only_paths(index, term_query(index, searcher, terms), allowed), pool, count=False
    ).hits
    if near is None or not hits:
        return list(hits[:fetch])
    bonus = {
        (a.segment_ord, a.doc): float(score)
        for score, a in searcher.search(near, PHRASE_POOL, count=False).hits
    }
    scored = [(float(score) + bonus.get((a.segment_ord, a.doc), 0.0), a) for score, a in hits]
    scored.sort(key=lambda h: -h[0])
    return scored[:fetch]


def ranked_chunks(
    index: Any,
    searcher: Any,
    terms: list[str],
    limit: int,
    details: dict[tuple[str, int], bytes] | None = None,
    allowed: frozenset[str] | None = None,
) -> list[tuple[str, int, float]]:
    """Top chunks as (path, ordinal, score), best first, deterministic ties; with
    `allowed`, chunks of those notes only.

    `details`, when given, receives each returned hit's stored detail (search_fields.
    encode_detail) keyed by (path, ordinal): the document is read anyway for its path."""
    terms = analyze_terms(terms)
    if not terms or searcher.num_docs == 0 or (allowed is not None and not allowed):
        return []
    hits = scored_addresses(index, searcher, terms, max(limit * 2, FETCH_MIN), allowed)
    if not hits:
        return []
    addrs = [a for _, a in hits]
    ordinals = searcher.fast_field_values(ORDINAL_FIELD, addrs)
    out = []
    blobs: dict[tuple[str, int], bytes] = {}
    for (score, addr), ordinal in zip(hits, ordinals, strict=True):
        doc = searcher.doc(addr)
        key = (str(doc.get_first(PATH_FIELD)), int(ordinal or 0))
        out.append((key[0], key[1], round(float(score), 6)))
        if details is not None:
            blob = doc.get_first(DETAIL_FIELD)
            if blob is not None:
                blobs[key] = bytes(blob)
    out.sort(key=lambda h: (-h[2], h[0], h[1]))
    out = out[:limit]
    if details is not None:
        details.update((k, blobs[k]) for k in ((p, o) for p, o, _ in out) if k in blobs)
    return out


def ranked_notes(
    index: Any,
    searcher: Any,
    terms: list[str],
    limit: int,
    details: dict[tuple[str, int], bytes] | None = None,
    allowed: frozenset[str] | None = None,
) -> list[tuple[str, int, float]]:
    """One best chunk per note, best first (a wider fetch so `limit` notes survive)."""
    seen: set[str] = set()
    out: list[tuple[str, int, float]] = []
    found: dict[tuple[str, int], bytes] | None = {} if details is not None else None
    for hit in ranked_chunks(index, searcher, terms, max(limit * 8, FETCH_MIN), found, allowed):
        if hit[0] not in seen:
            seen.add(hit[0])
            out.append(hit)
            if len(out) == limit:
                break
    if details is not None and found is not None:
        details.update((k, found[k]) for k in ((p, o) for p, o, _ in out) if k in found)
    return out
