"""Issue 8 item 7: `vault_find` says `candidate_cap` when max_candidates cut it off."""

from __future__ import annotations

from pathlib import Path

from .conftest import make_ctx
from .golden import call
from .vaultgen import write_vault


def test_sixty_matching_notes_and_max_candidates_one_is_candidate_cap(tmp_path: Path) -> None:
    files = {f"n/{i:02d}.md": f"# Note {i}\n\nthe lighthouse keeper log {i}\n" for i in range(60)}
    ctx = make_ctx(write_vault(tmp_path / "vault", files))
    try:
        cut = call(ctx, "find", {"query": "lighthouse keeper", "budget": {"max_candidates": 1}})
        summary = cut["data"]["summary"]
        assert (summary["cutoff_reason"], summary["integrated_candidates"]) == ("candidate_cap", 1)
        exact = call(ctx, "find", {"query": "lighthouse keeper", "budget": {"max_candidates": 60}})
        # All 60 fit: nothing was dropped, only Stage 1 was skipped.
        assert exact["data"]["summary"]["cutoff_reason"] == "stage_cap"
    finally:
        ctx.reader.close()
