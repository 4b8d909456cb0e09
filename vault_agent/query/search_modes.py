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


def semantic_warnings(reader: Any, snapshot: Any) -> list[WarningItem]:
    """SEMANTIC_PENDING while embeddings lag; SEMANTIC_UNAVAILABLE when the model cannot load."""
    return semantic.semantic_warnings(reader, snapshot)


def fuse(lexical: list[Hit], semantic_ranked: list[Hit], k: int) -> list[Hit]:
    """Hybrid ranking: reciprocal rank fusion with the semantic package's margin cut."""
    return semantic.fuse(lexical, semantic_ranked, k)
