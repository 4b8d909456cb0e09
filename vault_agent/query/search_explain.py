"""`search --explain`: how each hit was ranked, for the owner's web page and for debugging.

Per hit: its lexical rank and BM25 score, its semantic rank and cosine, what fusion added
for each (the reciprocal-rank shares), whether fusion pinned it (`pinned`: `title`, kept
first as the note the query names; `rare` / `quote`, kept in the top 3 as the one note
holding that word or phrase), and which fields hold a query term. Off by default (it costs a
few small engine look-ups per hit); bounded: fixed fields per hit, at most `limit` hits.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from vault_agent.query.models import Camel
from vault_agent.query.search_engine import open_engine
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.search_fields import PATH_FIELD, analyze_terms
from vault_agent.semantic.fusion import FusedHit
from vault_agent.text import tokenize

if TYPE_CHECKING:
    import tantivy  # typed (it ships tantivy.pyi); imported at run time only where used

__all__ = ["FusionExplain", "HitExplain", "explain_hits"]


class FusionExplain(Camel):
    lexical: float  # the lexical list's reciprocal-rank share, 1 / (60 + rank)
    semantic: float  # the semantic list's share
    pinned: str | None  # title: kept first (the query names it); rare | quote: kept in the top 3


class HitExplain(Camel):
    lexical_rank: int | None
    lexical_score: float | None
    semantic_rank: int | None
    cosine: float | None
    fusion: FusionExplain
    matched_fields: list[str]  # fields holding a query term: title, aliases, filename, folder, headings, body


def _has_alias_term(index: tantivy.Index, searcher: tantivy.Searcher, path: str, analyzed: list[str]) -> bool:
    import tantivy

    Q, Occur = tantivy.Query, tantivy.Occur
    terms = [(Occur.Should, Q.term_query(index.schema, "aliases", t)) for t in analyzed]
    q = Q.boolean_query(
        [(Occur.Must, Q.term_query(index.schema, PATH_FIELD, path)), (Occur.Must, Q.boolean_query(terms))]
    )
    return bool(searcher.search(q, 1, count=False).hits)


def matched_fields(
    path: str, title: str | None, heading_path: list[str], text: str, analyzed: set[str]
) -> list[str]:
    """The name and chunk fields whose analyzed tokens meet the query's (aliases apart)."""
    folder, _, name = path.rpartition("/")
    fields = {
        "title": title or "",
        "filename": PurePosixPath(name).stem,
        "folder": folder.replace("/", " "),
        "headings": " ".join(heading_path),
        "body": text,
    }
    return [f for f, value in fields.items() if value and analyzed & set(analyze_terms(tokenize(value)))]


def explain_hits(
    reader: SnapshotReader,
    view: SnapshotView,
    terms: list[str],
    explained: list[FusedHit],
    details: list[tuple[Any, ...]],
) -> list[HitExplain]:
    """One HitExplain per hit (`explained` and `details` in hit order)."""
    analyzed = analyze_terms(terms)
    wanted = set(analyzed)
    engine = None
    if analyzed and view.manifest.search_index:
        engine = open_engine(Path(reader.settings.index_dir), view.manifest.search_index)
    out = []
    for h, (title, heading_path, _, _, text) in zip(explained, details, strict=True):
        fields = matched_fields(h.path, title, list(heading_path or []), text or "", wanted)
        if engine is not None and _has_alias_term(engine[0], engine[1], h.path, analyzed):
            fields.insert(1 if "title" in fields else 0, "aliases")
        out.append(
            HitExplain(
                lexical_rank=h.lexical_rank,
                lexical_score=h.lexical_score,
                semantic_rank=h.semantic_rank,
                cosine=h.cosine,
                fusion=FusionExplain(
                    lexical=round(h.lexical_part, 6),
                    semantic=round(h.semantic_part, 6),
                    pinned=h.pinned,
                ),
                matched_fields=fields,
            )
        )
    return out
