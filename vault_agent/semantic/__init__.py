"""Local semantic search: offline embeddings per note, stored in the snapshot, fused with BM25.

Public entry points (see each module):
- `semantic_search(reader, view, query, k)`: cosine top-k of one pinned snapshot (query.py)
- `rrf(lexical, semantic, k, pins)`: reciprocal rank fusion with pins (fusion.py)
- `semantic_warnings(reader, view)`, `semantic_state(manifest, index_dir)`: lag, who
  computes the rest, and model health; `no_model_warning()`: why this platform has no
  model (progress.py)
- `SemanticIndexer`: the writer's background embedder (embedder.py)
"""

from vault_agent.semantic.fusion import rrf
from vault_agent.semantic.progress import no_model_warning, semantic_state, semantic_warnings
from vault_agent.semantic.query import semantic_search

__all__ = ["no_model_warning", "rrf", "semantic_search", "semantic_state", "semantic_warnings"]
