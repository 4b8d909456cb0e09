"""Search modes: which rankers answer (`lexical` | `semantic` | `hybrid`) — the semantic seam.

`search` calls `semantic_hits` (vault_agent.semantic: one embedding per note, cosine top-k)
for `semantic` and `hybrid`. Without embeddings it returns None and the answer is lexical
with a SEMANTIC_UNAVAILABLE warning (SPEC: asking for
semantic without embeddings is a warning, not an error); the default mode is hybrid when
embeddings exist, else lexical.
"""

from __future__ import annotations

from typing import Any, Literal

from vault_agent import semantic
from vault_agent.contracts import WarningItem
from vault_agent.search_fields import decode_detail
from vault_agent.semantic.evidence import names_note
from vault_agent.semantic.fusion import fuse_adaptive

Mode = Literal["lexical", "semantic", "hybrid"]
Group = Literal["chunk", "note"]
MODES: tuple[str, ...] = ("lexical", "semantic", "hybrid")
GROUPS: tuple[str, ...] = ("chunk", "note")

Hit = tuple[str, int, float]  # (note path, chunk ordinal, score), best first


def semantic_hits(reader: Any, snapshot: Any, query: str, k: int) -> list[Hit] | None:
    """The top-k chunks of the pinned `snapshot` for `query` by embedding (vault_agent.semantic).

    Answers only from the snapshot the request pinned; ranked (path, chunk ordinal, cosine)
    best first, ties by path then ordinal; None when there is nothing to rank with
    (semantic search off, the model failed to load, or no embeddings in this snapshot yet).
    """
    return semantic.semantic_hits(reader, snapshot, query, k)


def embeddings_available(snapshot: Any) -> bool:
    """Whether `snapshot` has embeddings (decides the default mode: hybrid, else lexical)."""
    state = semantic.semantic_state(snapshot.manifest, load_model=False)
    return state.enabled and state.embedded_notes > 0


def semantic_warnings(reader: Any, snapshot: Any, *, lexical_answer: bool = False) -> list[WarningItem]:
    """SEMANTIC_PENDING while embeddings lag and a process computes them, SEMANTIC_OFF when
    none does; SEMANTIC_UNAVAILABLE when the model cannot load (semantic/progress.py).
    `lexical_answer`: the answer is lexical although semantic ranking was asked for (or
    would be the default), which the warning says."""
    return semantic.semantic_warnings(reader, snapshot, lexical_answer=lexical_answer)


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
    terms: list[str] | None = None,
    details: dict[tuple[str, int], bytes] | None = None,
) -> list[Hit]:
    """Hybrid ranking: reciprocal rank fusion with the semantic package's margin cut,
    adapted to the lexical evidence (semantic.fusion.fuse_adaptive): when the query's
    `terms` name the lexical first note (its title from the engine's stored `details`),
    that note keeps its place; otherwise the model's ranking weighs more. Without terms
    or details: plain fusion."""
    if terms is None or details is None or not lexical:
        return semantic.fuse(lexical, semantic_ranked, k)
    path, ordinal, _ = lexical[0]
    blob = details.get((path, ordinal))
    title = decode_detail(blob)[0] if blob is not None else None
    return fuse_adaptive(lexical, semantic_ranked, k, names_note(terms, title, path))
