"""What a snapshot's full-text engine dir holds, for comparing incremental and full builds."""

from __future__ import annotations

from pathlib import Path

import tantivy

from vault_agent.freshness import read_current_manifest
from vault_agent.query.search_engine import open_engine


def engine_docs(index_dir: Path) -> list[tuple[str, int, bytes]]:
    """Sorted (path, chunk ordinal, stored hit detail) of every live document in CURRENT's
    engine dir; it also proves the dir opens and answers a query from that snapshot alone."""
    manifest = read_current_manifest(index_dir)
    assert manifest is not None and manifest.search_index
    _, searcher = open_engine(Path(index_dir), manifest.search_index)
    hits = searcher.search(tantivy.Query.all_query(), limit=max(1, searcher.num_docs)).hits
    docs = [searcher.doc(a) for _, a in hits]
    return sorted(
        (str(d.get_first("path")), int(d.get_first("ordinal")), bytes(d.get_first("detail"))) for d in docs
    )


def chunk_keys(rows: dict[str, list[tuple]]) -> list[tuple[str, int]]:
    """Sorted (path, ordinal) of the chunks table, plus ordinal 0 for notes without chunks."""
    keys = {(str(r[0]), int(r[1])) for r in rows["chunks"]}
    with_chunks = {p for p, _ in keys}
    keys |= {(str(r[0]), 0) for r in rows["notes"] if r[0] not in with_chunks}
    return sorted(keys)
