"""Semantic hits' details (title, heading path, line span, text) come from the snapshot's
engine documents and equal what the Parquet path reads for the same snapshot."""

from __future__ import annotations

from pathlib import Path

from vault_agent.config import Settings
from vault_agent.indexer.engine import Writer
from vault_agent.query.search import RankRequest, hit_details, query_terms, ranked_hits

from .conftest import reader_for
from .test_hybrid_search import QUERIES


def test_engine_details_equal_the_parquet_details(embedded_vault: tuple[Settings, Writer]) -> None:
    settings, _ = embedded_vault
    reader = reader_for(settings)
    try:
        with reader.acquire() as view:
            seen, answered = 0, 0
            for query in QUERIES:
                for group in ("chunk", "note"):
                    request = RankRequest(query["q"], query_terms(query["q"]), 20, "semantic", group)
                    ranking = ranked_hits(reader, view, request)
                    hits = ranking.hits
                    assert ranking.mode == "semantic"
                    answered += bool(hits)  # a query no note holds a word of may be refused
                    from_engine = hit_details(view, hits, None, Path(settings.index_dir))
                    from_parquet = hit_details(view, hits, None, None)
                    assert from_engine == from_parquet
                    seen += len(hits)
            # (NO_CONFIDENT_MATCH: semantic.confidence); the fixture's questions mostly answer
            assert answered >= 2 * len(QUERIES) - 4
            assert seen >= 10 * answered
    finally:
        reader.close()
