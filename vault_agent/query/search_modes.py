"""Search modes: which rankers answer (`lexical` | `semantic` | `hybrid`) — the semantic seam.

`search` calls `semantic_hits` for `semantic` and `hybrid`. Without embeddings it returns
None and the answer is lexical with a SEMANTIC_UNAVAILABLE warning (SPEC: asking for
semantic without embeddings is a warning, not an error); the default mode is hybrid when
embeddings exist, else lexical.
"""

from __future__ import annotations

from typing import Any, Literal

Mode = Literal["lexical", "semantic", "hybrid"]
Group = Literal["chunk", "note"]
MODES: tuple[str, ...] = ("lexical", "semantic", "hybrid")
GROUPS: tuple[str, ...] = ("chunk", "note")
RRF_K = 60

Hit = tuple[str, int, float]  # (note path, chunk ordinal, score), best first


def semantic_hits(snapshot: Any, query: str, k: int) -> list[Hit] | None:
    """THE SEAM for semantic search: the top-k chunks of `snapshot` for `query` by embedding.

    Inputs: `snapshot` is the SnapshotView the request pinned (its `manifest` names the
    segments; answer only from it, never from a newer snapshot), `query` the raw query text
    (already validated: non-empty, <= 1,000 chars), `k` how many hits the caller wants.
    Output: ranked (path, chunk ordinal, score) best first with deterministic ties (path,
    then ordinal), or None when this snapshot has no embeddings (the caller then answers
    lexical with a warning). Until the semantic package is wired here, always None.
    """
    del snapshot, query, k
    return None


def embeddings_available(snapshot: Any) -> bool:
    """Whether `snapshot` has embeddings (decides the default mode: hybrid, else lexical)."""
    del snapshot
    return False


def fuse(lexical: list[Hit], semantic: list[Hit], k: int) -> list[Hit]:
    """Reciprocal rank fusion of two ranked lists (score = Σ 1/(RRF_K + rank)), top k."""
    scores: dict[tuple[str, int], float] = {}
    for ranked in (lexical, semantic):
        for rank, (path, ordinal, _) in enumerate(ranked, 1):
            scores[(path, ordinal)] = scores.get((path, ordinal), 0.0) + 1.0 / (RRF_K + rank)
    out = [(p, o, round(s, 6)) for (p, o), s in scores.items()]
    out.sort(key=lambda h: (-h[2], h[0], h[1]))
    return out[:k]
