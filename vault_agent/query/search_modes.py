"""Search modes: which rankers answer (`lexical` | `semantic` | `hybrid`) — the semantic seam.

`search` calls vault_agent.semantic (`semantic_search`: one embedding per note, cosine
top-k) for `semantic` and `hybrid`. Without embeddings it returns None and the answer is lexical
with a SEMANTIC_UNAVAILABLE warning (SPEC: asking for
semantic without embeddings is a warning, not an error); the default mode is hybrid when
embeddings exist, else lexical. Hybrid ranking (`hybrid_ranking`) reads the lexical
evidence here (does the query name the lexical first note, does one note alone hold a
rare word, a CJK word or a quoted phrase of it, does a keyword typed exactly pick a hit:
`named_pin`, `held_pin`, `exact_pin`) and hands the pins to vault_agent.semantic.fusion.rrf.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from vault_agent.query.snapshot import SnapshotView
from vault_agent.search_fields import FIELD_BOOSTS, ORDINAL_FIELD, PATH_FIELD, analyze_terms, decode_detail
from vault_agent.semantic import evidence
from vault_agent.semantic.evidence import cjk_runs, exact_lead, names_note, quoted_phrases
from vault_agent.semantic.fusion import HELD_RANK, FusedHit, Pin, rrf
from vault_agent.semantic.progress import semantic_state
from vault_agent.text import tokenize

if TYPE_CHECKING:
    import tantivy  # typed (it ships tantivy.pyi); imported at run time only where used

Mode = Literal["lexical", "semantic", "hybrid"]
Group = Literal["chunk", "note"]
MODES: tuple[str, ...] = ("lexical", "semantic", "hybrid")
GROUPS: tuple[str, ...] = ("chunk", "note")

Hit = tuple[str, int, float]  # (note path, chunk ordinal, score), best first


def embeddings_available(view: SnapshotView) -> bool:
    """Whether the pinned snapshot has embeddings (decides the default mode: hybrid, else lexical)."""
    state = semantic_state(view.manifest, load_model=False)
    return state.enabled and state.embedded_notes > 0


# A term in more chunks than this is not rare whatever its notes (a bound on the documents
# read to count a term's notes).
RARE_SCAN_CHUNKS = 32
TEXT_FIELDS = tuple(f for f in FIELD_BOOSTS if f != "folder")  # where a phrase is looked for
CJK_TOKEN_RE = re.compile(evidence.CJK_CHARS)


def _doc_freq(searcher: tantivy.Searcher, term: str) -> int:
    return max(int(searcher.doc_freq(field, term)) for field in FIELD_BOOSTS)


def _sole_note(searcher: tantivy.Searcher, query: tantivy.Query) -> tuple[str, int] | None:
    """(path, chunk ordinal of the best chunk) of the one note whose chunks match `query`;
    None when none or several do (at most RARE_SCAN_CHUNKS + 1 chunks read)."""
    hits = searcher.search(query, RARE_SCAN_CHUNKS + 1, count=False).hits
    if not hits or len(hits) > RARE_SCAN_CHUNKS:
        return None
    docs = [searcher.doc(addr) for _, addr in hits]
    if len({d.get_first(PATH_FIELD) for d in docs}) != 1:
        return None
    return str(docs[0].get_first(PATH_FIELD)), int(docs[0].get_first(ORDINAL_FIELD) or 0)


def _phrase(index: tantivy.Index, terms: list[str], fields: tuple[str, ...]) -> tantivy.Query:
    import tantivy

    Q, Occur = tantivy.Query, tantivy.Occur
    if len(terms) == 1:
        clauses = [(Occur.Should, Q.term_query(index.schema, f, terms[0])) for f in fields]
    else:
        words: list[str | tuple[int, str]] = list(terms)
        clauses = [(Occur.Should, Q.phrase_query(index.schema, f, words)) for f in fields]
    return Q.boolean_query(clauses)


# Scripts a query is written in (its letters casefolded, NFKC), as character classes of
# the engine's terms: a query no note holds a word of is a question in another language
# when the vault holds no word of its script at all (semantic.confidence).
SCRIPTS: dict[str, str] = {
    "han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
    "kana": "\u3040-\u30ff",
    "hangul": "\uac00-\ud7af",
    "latin": "a-z\u00df-\u024f",
    "greek": "\u0370-\u03ff",
    "cyrillic": "\u0400-\u04ff",
    "hebrew": "\u0590-\u05ff",
    "arabic": "\u0600-\u06ff",
    "devanagari": "\u0900-\u097f",
    "thai": "\u0e00-\u0e7f",
}


def query_script(query: str) -> str | None:
    """The script most of the query's letters are in (SCRIPTS), None when it has none."""
    text = unicodedata.normalize("NFKC", query).casefold()
    counts = {name: len(re.findall(f"[{chars}]", text)) for name, chars in SCRIPTS.items()}
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] else None


def script_held(engine: tuple[tantivy.Index, tantivy.Searcher], query: str) -> bool:
    """Whether any note holds a word in the query's script (True when it has none): one
    regular-expression look-up in the engine's term dictionary per text field."""
    import tantivy

    script = query_script(query)
    if script is None:
        return True
    index, searcher = engine
    Q, Occur = tantivy.Query, tantivy.Occur
    pattern = f"[{SCRIPTS[script]}].*"
    q = Q.boolean_query([(Occur.Should, Q.regex_query(index.schema, f, pattern)) for f in TEXT_FIELDS])
    return bool(searcher.search(q, 1, count=False).hits)


def held_pin(engine: tuple[tantivy.Index, tantivy.Searcher], query: str, terms: list[str]) -> Pin | None:
    """The note the query pins by its words, or None: the one note holding a quoted phrase
    ("…", “…”, 「…」, 『…』) of the query as a phrase; else the one note holding a run of
    three or more CJK characters (as typed: a CJK word has no spaces, so its bigrams are
    not words) or a word (as the engine analyzes it) of the query, when every such run and
    word that one note alone holds points to the same note. Each costs
    a dictionary look-up, then at most RARE_SCAN_CHUNKS + 1 documents read."""
    index, searcher = engine
    quoted: set[tuple[str, int]] = set()
    for phrase in quoted_phrases(query):
        words = [w for t in tokenize(phrase) for w in analyze_terms([t])]
        where = _sole_note(searcher, _phrase(index, words, TEXT_FIELDS)) if words else None
        if where is not None:
            quoted.add(where)
    if len({p for p, _ in quoted}) == 1:
        path, ordinal = min(quoted)
        return Pin(path, ordinal, "quote", HELD_RANK)
    rare: set[tuple[str, int]] = set()
    for run in cjk_runs(query):
        where = _sole_note(searcher, _phrase(index, list(tokenize(run)), TEXT_FIELDS))
        if where is not None:
            rare.add(where)
    for term in analyze_terms(terms):
        if CJK_TOKEN_RE.fullmatch(term):
            continue  # a bigram is not a word: a CJK word is its run (above)
        if 0 < _doc_freq(searcher, term) <= RARE_SCAN_CHUNKS:
            where = _sole_note(searcher, _phrase(index, [term], tuple(FIELD_BOOSTS)))
            if where is not None:
                rare.add(where)
    if len({p for p, _ in rare}) == 1:
        path, ordinal = min(rare)
        return Pin(path, ordinal, "rare", HELD_RANK)
    return None


def _hit_text(details: dict[tuple[str, int], bytes], hit: Hit) -> tuple[str | None, str | None, str]:
    """(title, top heading, chunk text) of a lexical hit from the engine's stored detail."""
    blob = details.get((hit[0], hit[1]))
    if blob is None:
        return None, None, ""
    title, heading_path, _, _, text = decode_detail(blob)
    return title, (heading_path[0] if heading_path else None), text


def named_pin(terms: list[str], lexical: list[Hit], details: dict[tuple[str, int], bytes]) -> Pin | None:
    """The lexical first note, pinned first, when the query names it (evidence.names_note:
    it holds at least half of the note's title, file name or top heading, and is at least
    half made of them)."""
    if not lexical or not terms:
        return None
    title, heading, _ = _hit_text(details, lexical[0])
    if not names_note(terms, title, lexical[0][0], heading):
        return None
    return Pin(lexical[0][0], lexical[0][1], "title", 1)


def exact_pin(
    query: str, lexical: list[Hit], details: dict[tuple[str, int], bytes], place: int
) -> Pin | None:
    """For a keyword query: the first lexical hit holding a word of the query exactly as
    typed where the stemmer matched more notes (evidence.exact_lead), pinned at `place`."""
    texts = []
    for hit in lexical:
        title, _, text = _hit_text(details, hit)
        texts.append(f"{title or ''}\n{PurePosixPath(hit[0]).stem}\n{text}")
    lead = exact_lead(query, texts)
    return None if lead is None else Pin(lexical[lead][0], lexical[lead][1], "exact", place)


@dataclass(frozen=True)
class HybridRequest:
    """What hybrid ranking fuses: the query and its terms, both rankers' hits, the engine's
    stored detail of the lexical hits, how many to answer (`k`), and the notes the search
    filters leave (None: all)."""

    query: str
    terms: list[str]
    lexical: list[Hit]
    details: dict[tuple[str, int], bytes]
    semantic: list[Hit]
    k: int
    allowed: frozenset[str] | None = None


def hybrid_ranking(
    engine: tuple[tantivy.Index, tantivy.Searcher] | None, request: HybridRequest
) -> list[FusedHit]:
    """The hybrid answer: plain RRF of both lists (fusion.rrf) with the pins that measured
    better than it (docs/retrieval.md "Fusion"): the lexical first note first when the query
    names it (named_pin); the note the query's words pin in the top fusion.HELD_RANK
    (held_pin; `engine`: the snapshot's (index, searcher), None: none), else, for a keyword
    query, the lexical hit holding a word typed exactly first (exact_pin); see HybridRequest."""
    query, terms, lexical, details = request.query, request.terms, request.lexical, request.details
    semantic, k, allowed = request.semantic, request.k, request.allowed
    pins = [p for p in (named_pin(terms, lexical, details),) if p is not None]
    held = held_pin(engine, query, terms) if engine is not None and terms else None
    if held is not None and allowed is not None and held.path not in allowed:
        held = None
    other = held or exact_pin(query, lexical, details, 1)
    return rrf(lexical, semantic, k, [*pins, *([other] if other is not None else [])])


def lead_agreed(
    fused: list[Hit],
    lexical: list[Hit],
    semantic_ranked: list[Hit],
    terms: list[str],
    details: dict[tuple[str, int], bytes],
) -> bool:
    """Whether the hybrid ranking's first note is backed by both kinds of evidence: both
    rankers put it first, or it is the lexical first note and the query names it
    (evidence.names_note). vault_find takes such a lead as sufficient evidence by itself
    (find.lead_sufficiency); any other lead is judged by the query's words alone."""
    if not fused or not lexical or fused[0][0] != lexical[0][0]:
        return False
    if semantic_ranked and semantic_ranked[0][0] == fused[0][0]:
        return True
    blob = details.get((lexical[0][0], lexical[0][1]))
    title = decode_detail(blob)[0] if blob is not None else None
    return names_note(terms, title, lexical[0][0])
