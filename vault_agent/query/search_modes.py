"""Search modes: which rankers answer (`lexical` | `semantic` | `hybrid`) — the semantic seam.

`search` calls vault_agent.semantic (`semantic_search`: one embedding per note, cosine
top-k) for `semantic` and `hybrid`. Without embeddings it returns None and the answer is lexical
with a SEMANTIC_UNAVAILABLE warning (SPEC: asking for
semantic without embeddings is a warning, not an error); the default mode is hybrid when
embeddings exist, else lexical. Hybrid fusion reads the lexical evidence here (does the
query name the lexical first note, or pin it by a rare term or a quoted phrase:
`lexical_evidence`) and hands it to vault_agent.semantic.fusion.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

import numpy as np

from vault_agent.query.snapshot import SnapshotView
from vault_agent.search_fields import FIELD_BOOSTS, PATH_FIELD, analyze_terms, decode_detail
from vault_agent.semantic import evidence
from vault_agent.semantic.encoder import active_model
from vault_agent.semantic.evidence import exact_lead, lock_reason, names_note, word_count
from vault_agent.semantic.fusion import FusedHit, fuse_explained
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


@dataclass(frozen=True)
class LexicalEvidence:
    """What the lexical list says about the query (fusion's switches, evidence.py)."""

    described: bool  # in other words (no name, enough words): the model's list weighs more
    lock: str | None  # why the lead keeps first place (None: it may move)
    lead: int = 0  # the lexical hit the lock keeps first: the engine's first, or "exact"'s


# A term in more chunks than this is not rare whatever its notes (a bound on the documents
# read to count a term's notes).
RARE_SCAN_CHUNKS = 32


def _doc_freq(searcher: tantivy.Searcher, term: str) -> int:
    return max(int(searcher.doc_freq(field, term)) for field in FIELD_BOOSTS)


def _notes_of(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """Distinct notes among the chunks matching `query` (at most RARE_SCAN_CHUNKS read)."""
    hits = searcher.search(query, RARE_SCAN_CHUNKS + 1, count=False).hits
    if len(hits) > RARE_SCAN_CHUNKS:
        return RARE_SCAN_CHUNKS
    return len({searcher.doc(addr).get_first(PATH_FIELD) for _, addr in hits})


def _note_freq(index: tantivy.Index, searcher: tantivy.Searcher, term: str) -> int:
    """Notes holding an analyzed term in any field (chunks first: a dictionary look-up)."""
    import tantivy

    chunks = _doc_freq(searcher, term)
    if chunks == 0 or chunks > RARE_SCAN_CHUNKS:
        return chunks
    Q, Occur = tantivy.Query, tantivy.Occur
    q = Q.boolean_query([(Occur.Should, Q.term_query(index.schema, f, term)) for f in FIELD_BOOSTS])
    return _notes_of(searcher, q)


def _aliases_hold(index: tantivy.Index, searcher: tantivy.Searcher, path: str, terms: list[str]) -> bool:
    """Whether the note's aliases field holds every term (one small search per term: the
    aliases are indexed, not stored)."""
    import tantivy

    Q, Occur = tantivy.Query, tantivy.Occur
    at_path = Q.term_query(index.schema, PATH_FIELD, path)
    for t in terms:
        q = Q.boolean_query([(Occur.Must, at_path), (Occur.Must, Q.term_query(index.schema, "aliases", t))])
        if not searcher.search(q, 1, count=False).hits:
            return False
    return True


def _run_freq(index: tantivy.Index, searcher: tantivy.Searcher, run: str) -> int:
    """Notes holding a CJK run: its bigrams as a phrase in any text field."""
    import tantivy

    Q, Occur = tantivy.Query, tantivy.Occur
    grams: list[str | tuple[int, str]] = list(tokenize(run))
    if len(grams) < 2:
        return _note_freq(index, searcher, str(grams[0])) if grams else 0
    fields = [f for f in FIELD_BOOSTS if f != "folder"]
    q = Q.boolean_query([(Occur.Should, Q.phrase_query(index.schema, f, grams)) for f in fields])
    return _notes_of(searcher, q)


def lexical_evidence(
    engine: tuple[tantivy.Index, tantivy.Searcher] | None,
    query: str,
    terms: list[str],
    lexical: list[Hit],
    details: dict[tuple[str, int], bytes],
) -> LexicalEvidence:
    """The evidence of the lexical first hit (its title and text from the engine's stored
    `details`; document frequencies and aliases from the `engine` (index, searcher))."""
    wordy = word_count(query) >= evidence.DESCRIBED_MIN_WORDS
    if not lexical or not terms:
        return LexicalEvidence(wordy, None)
    path, ordinal, _ = lexical[0]
    blob = details.get((path, ordinal))
    title, heading_path, _, _, text = decode_detail(blob) if blob is not None else (None, [], 0, 0, "")
    heading = heading_path[0] if heading_path else None
    named = names_note(terms, title, path, heading)
    if engine is None:
        return LexicalEvidence(wordy and not named, "title" if named else None)
    index, searcher = engine
    lock = lock_reason(
        query,
        terms,
        analyze_terms(terms),
        title,
        path,
        text,
        lambda t: _note_freq(index, searcher, t),
        lambda ts: _aliases_hold(index, searcher, path, ts),
        heading,
        lambda run: _run_freq(index, searcher, run),
    )
    described = wordy and not (named or lock == "alias")
    if lock is None and not described:
        texts = []
        for p, o, _ in lexical:
            blob = details.get((p, o))
            hit_title, _, _, _, hit_text = decode_detail(blob) if blob is not None else (None, [], 0, 0, "")
            texts.append(f"{hit_title or ''}\n{PurePosixPath(p).stem}\n{hit_text}")
        lead = exact_lead(query, texts)
        if lead is not None:
            return LexicalEvidence(described, "exact", lead)
    return LexicalEvidence(described, lock)


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


def fuse(
    lexical: list[Hit],
    semantic_ranked: list[Hit],
    k: int,
    evidence: LexicalEvidence | None = None,
    vectors: np.ndarray | None = None,
) -> list[FusedHit]:
    """Hybrid ranking (semantic.fusion.fuse_explained) under the lexical `evidence`:
    a locked lexical first hit stays first; a query that names a note or is a keyword
    keeps equal weights, one that describes a note lets the model's ranking weigh more; near-duplicate hits
    (`vectors` of the semantic hits) without better lexical evidence move down."""
    ev = evidence or LexicalEvidence(False, None)
    model = active_model()
    return fuse_explained(
        lexical,
        semantic_ranked,
        k,
        described=ev.described,
        locked=ev.lock,
        lead=ev.lead,
        vectors=vectors,
        duplicate_cosine=model.duplicate_cosine,
        semantic_margin=model.semantic_margin,
    )
