"""Behaviour of search, get, related, grep and find beyond the goldens: limits, freshness,
changed files, no index, runaway patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.errors import IndexNotFound, VaultAgentError
from vault_agent.query.grep import GrepRequest, vault_search

from .conftest import make_ctx
from .golden import call
from .vaultgen import write_vault


def _code(ctx: AppContext, op: str, raw: dict[str, object]) -> str:
    with pytest.raises(VaultAgentError) as info:
        call(ctx, op, raw)
    return info.value.code


@pytest.mark.parametrize(
    ("op", "raw", "code"),
    [
        ("search", {"query": "lamp", "limit": 0}, "INVALID_LIMIT"),
        ("search", {"query": "lamp", "limit": 51}, "INVALID_LIMIT"),
        ("search", {"q": "lamp", "limit": "x"}, "INVALID_LIMIT"),
        ("search", {"query": "   "}, "INVALID_PARAMETER"),
        ("search", {"query": ""}, "INVALID_PARAMETER"),
        ("related", {"path": "Home.md", "limit": 0}, "INVALID_LIMIT"),
        ("related", {"path": "Home.md", "limit": 51}, "INVALID_LIMIT"),
        ("related", {"path": "resources/data.txt"}, "INVALID_PATH"),
        ("get", {"path": "resources/data.txt"}, "INVALID_PATH"),
        ("get", {"path": "log"}, "INVALID_PATH"),
        ("grep", {"query": ""}, "INVALID_PARAMETER"),
        ("grep", {"query": " "}, "INVALID_PARAMETER"),
        ("grep", {"query": "x", "limit": 501}, "INVALID_PARAMETER"),
        ("grep", {"query": "x", "mode": "fuzzy"}, "INVALID_PARAMETER"),
        ("grep", {"query": "x", "context_lines": 11}, "INVALID_PARAMETER"),
        ("grep", {"query": "x", "glob": "{a"}, "INVALID_PARAMETER"),
        ("find", {"query": ""}, "INVALID_PARAMETER"),
        ("find", {"query": "x", "budget": {"time_ms": 0}}, "INVALID_PARAMETER"),
        ("find", {"query": "x", "budget": {"max_candidates": 0}}, "INVALID_PARAMETER"),
        ("scan", {"path": "Home.md", "chunk_lines": 1001}, "INVALID_PARAMETER"),
        ("read", {"path": "Home.md"}, "INVALID_PARAMETER"),
        ("read", {"path": "log", "full": True}, "INVALID_PATH"),
        ("ls", {"relative_dir": "Home.md"}, "INVALID_PATH"),
        ("ls", {"sort": "size"}, "INVALID_PARAMETER"),
        (
            "coverage",
            {"path": "Home.md", "cited_ranges": [{"start_line": 0, "end_line": 1}]},
            "INVALID_PARAMETER",
        ),
        ("coverage", {"path": "Home.md"}, "INVALID_PARAMETER"),
    ],
)
def test_parameter_errors(mctx: AppContext, op: str, raw: dict[str, object], code: str) -> None:
    assert _code(mctx, op, raw) == code


def test_search_is_deterministic_and_ties_go_to_path(mctx: AppContext) -> None:
    first = call(mctx, "search", {"query": "checked lamp", "limit": 50})
    assert first == call(mctx, "search", {"query": "checked lamp", "limit": 50})
    rows = first["data"]["results"]
    keys = [(-r["score"], r["path"], r["startLine"]) for r in rows]
    assert keys == sorted(keys)
    assert all(len(r["snippet"]) <= 242 for r in rows)


def test_search_without_terms_is_empty(mctx: AppContext) -> None:
    body = call(mctx, "search", {"query": "!!!"})
    assert body["data"] == {
        "queryTerms": 0,
        "mode": "lexical",
        "group": "chunk",
        "results": [],
        "indexFreshness": "fresh",
    }
    # and, like every search answer while notes lack embeddings, how far they are
    assert [w["code"] for w in body["warnings"]] == ["NO_SEARCH_TERMS", "SEMANTIC_OFF"]


def test_not_fresh_answers_carry_the_state_and_one_warning(tmp_path: Path) -> None:
    ctx = make_ctx(write_vault(tmp_path / "v"), freshness="stale")
    try:
        body = call(ctx, "search", {"query": "lamp", "limit": 1})
        assert body["data"]["indexFreshness"] == "stale"
        # one freshness warning (then the embedding state every search answer carries)
        assert [w["code"] for w in body["warnings"]] == ["INDEX_STALE", "SEMANTIC_OFF"]
        find = call(ctx, "find", {"query": "lamp"})
        assert find["data"]["summary"]["warnings"] == 1
        assert [w["code"] for w in find["warnings"]] == ["INDEX_STALE"]
    finally:
        ctx.reader.close()


def test_changed_files_are_searched_on_disk_and_flagged_by_get(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "v")
    ctx = make_ctx(root, freshness="stale")
    try:
        (root / "resources" / "guide.md").write_text("# Guide\n\nnow about zeppelins\n", encoding="utf-8")
        (root / "Home.md").unlink()
        (root / "new.md").write_text("a zeppelin note\n", encoding="utf-8")
        hits = call(ctx, "grep", {"query": "zeppelin|Keeper Log", "line_numbers": True})["data"]["results"]
        assert hits == [
            {"path": "new.md", "snippet": "a zeppelin note", "line": 1},
            {"path": "resources/guide.md", "snippet": "now about zeppelins", "line": 3},
        ]
        note = call(ctx, "get", {"path": "resources/guide.md"})
        assert (note["data"]["snapshotMatches"], note["data"]["inSnapshot"]) == (False, True)
        assert [w["code"] for w in note["warnings"]] == ["INDEX_STALE", "NOTE_CHANGED"]
        fresh_note = call(ctx, "get", {"path": "NEW.md"})
        assert (fresh_note["data"]["path"], fresh_note["data"]["inSnapshot"]) == ("new.md", False)
    finally:
        ctx.reader.close()


def test_grep_and_file_tools_work_without_an_index(tmp_path: Path) -> None:
    ctx = make_ctx(write_vault(tmp_path / "v"), index=False)
    try:
        hits = call(ctx, "grep", {"query": "beacon|hidden comment", "context_lines": 1})["data"]["results"]
        assert [(h["path"], h["line"]) for h in hits] == [
            ("log/Keeper Log.md", 206),
            ("resources/guide.md", 8),
        ]
        assert call(ctx, "scan", {"path": "Home.md"})["data"]["eof"] is True
        with pytest.raises(IndexNotFound):
            call(ctx, "search", {"query": "lamp"})
    finally:
        ctx.reader.close()


def test_runaway_regex_is_linear_time(mctx: AppContext, tmp_path: Path) -> None:
    root = Path(mctx.settings.vault)
    body = call(mctx, "grep", {"query": "(a+)+$|(x+x+)+y", "limit": 5})
    assert body["data"]["results"] == [] and body["warnings"] == []
    assert root.exists()


def test_runaway_budget_returns_partial_results_with_a_warning(mctx: AppContext) -> None:
    out = vault_search(mctx.vault, mctx.reader, GrepRequest("lamp", time_budget_s=0.0))
    assert out.data.results == []
    assert [w.code for w in out.warnings] == ["SEARCH_TIME_BUDGET"]


def test_crlf_and_cr_lines_are_numbered_like_the_index(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "v", {"a.md": "# A\r\n\r\nfirst\r\nsecond\rthird\n"})
    ctx = make_ctx(root)
    try:
        hits = call(ctx, "grep", {"query": "second|third", "line_numbers": True})["data"]["results"]
        assert [(h["line"], h["snippet"]) for h in hits] == [(4, "second"), (5, "third")]
        read = call(ctx, "read", {"path": "a.md", "range": {"start_line": 4, "end_line": 5}})["data"]
        assert read["text"] == "second\rthird\n"
    finally:
        ctx.reader.close()


def test_find_caps_and_scopes(mctx: AppContext) -> None:
    capped = call(mctx, "find", {"query": "lamp glass", "budget": {"max_candidates": 1}})["data"]["summary"]
    assert (capped["cutoff_reason"], capped["integrated_candidates"], capped["max_stage_applied"]) == (
        "candidate_cap",
        1,
        1.5,
    )
    staged = call(mctx, "find", {"query": "lamp", "budget": {"max_candidates": 1}})["data"]["summary"]
    # Several notes hold "lamp": max_candidates cut them (issue 8 item 7), not the stage.
    assert (staged["cutoff_reason"], staged["max_stage_applied"]) == ("candidate_cap", 0.0)
    scoped = call(mctx, "find", {"query": "lamp", "scope": {"glob": "artifacts/*.md"}})["data"]
    assert scoped["summary"]["scope_expanded"] is False
    assert {a["params"]["path"] for a in scoped["next_actions"] if a["params"]} <= {
        "artifacts/summary.md",
        "artifacts/bad.md",
    }
    uncut = call(mctx, "find", {"query": "lamp"})["data"]["summary"]
    assert "cutoff_reason" not in uncut


def test_related_links_resolve_both_ways(mctx: AppContext) -> None:
    rows = call(mctx, "related", {"path": "resources/GUIDE.md"})["data"]
    home = next(r for r in rows["related"] if r["path"] == "Home.md")
    assert rows["path"] == "resources/guide.md"
    assert home["reasons"][:2] == ["links_to", "linked_from"]


def test_concurrent_first_searches_share_one_snapshot_cache(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    ctx = make_ctx(write_vault(tmp_path / "v"))
    try:
        with ThreadPoolExecutor(4) as pool:
            bodies = list(
                pool.map(lambda q: call(ctx, "search", {"query": q}), ["lamp", "灯台", "lamp", "beacon"] * 3)
            )
        assert bodies[0] == bodies[2] and bodies[1]["data"]["results"]
    finally:
        ctx.reader.close()


def test_vault_search_result_keys_are_seed_002_exactly(mctx: AppContext) -> None:
    """Seed 002: results are {path, snippet}; line only on request (line_numbers / context)."""
    plain = call(mctx, "grep", {"query": "beacon", "limit": 3})["data"]
    assert plain["results"] and all(set(r) == {"path", "snippet"} for r in plain["results"])
    numbered = call(mctx, "grep", {"query": "beacon", "limit": 3, "line_numbers": True})["data"]
    assert [set(r) for r in numbered["results"]] == [{"path", "snippet", "line"}] * len(plain["results"])
    assert [{k: r[k] for k in ("path", "snippet")} for r in numbered["results"]] == plain["results"]


def test_reversed_cited_range_is_normalized(ctx: AppContext) -> None:
    fwd = invoke(
        CATALOG.named("coverage"),
        ctx,
        {"path": "Home.md", "cited_ranges": [{"start_line": 1, "end_line": 3}]},
    )
    rev = invoke(
        CATALOG.named("coverage"),
        ctx,
        {"path": "Home.md", "cited_ranges": [{"start_line": 3, "end_line": 1}]},
    )
    assert body_of(CATALOG.named("coverage"), rev) == body_of(CATALOG.named("coverage"), fwd)
