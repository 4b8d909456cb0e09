"""Details of hits the engine did not rank (semantic hits), read from the engine itself.

Every chunk document of a snapshot's engine stores what a hit shows (search_fields.
DETAIL_FIELD: title, heading path, line span, text) and its note path is an indexed raw
term, so a semantic hit's detail is one term lookup on the path plus a fast-field read of
the ordinals: ~0.1 ms a hit, where reading the Parquet row groups of the hit notes took
~90 ms at 100k notes (the hybrid p50 budget is 60 ms). Same pinned snapshot: the engine
dir is the one the manifest names. A hit the engine lacks (a note without chunks, or
beyond MAX_CHUNKS_PER_NOTE) is left to the caller's Parquet path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vault_agent.search_fields import DETAIL_FIELD, ORDINAL_FIELD, PATH_FIELD

MAX_CHUNKS_PER_NOTE = 2_000  # chunk documents read per hit note (a bound, not a filter)

__all__ = ["engine_details"]


def engine_details(
    index: Any, searcher: Any, keys: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], bytes]:
    """Stored detail blobs for (path, chunk ordinal) keys; keys not found are absent."""
    import tantivy

    wanted: dict[str, set[int]] = {}
    for path, ordinal in keys:
        wanted.setdefault(path, set()).add(ordinal)
    out: dict[tuple[str, int], bytes] = {}
    for path, ordinals in wanted.items():
        query = tantivy.Query.term_query(index.schema, PATH_FIELD, path)
        addrs = [a for _, a in searcher.search(query, MAX_CHUNKS_PER_NOTE, count=False).hits]
        if not addrs:
            continue
        for addr, ordinal in zip(addrs, searcher.fast_field_values(ORDINAL_FIELD, addrs), strict=True):
            if int(ordinal or 0) in ordinals:
                blob = searcher.doc(addr).get_first(DETAIL_FIELD)
                if blob is not None:
                    out[(path, int(ordinal or 0))] = bytes(blob)
    return out
