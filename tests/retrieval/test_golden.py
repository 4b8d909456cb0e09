"""Golden answers of every retrieval tool on the synthetic vaults (English and Japanese)."""

from __future__ import annotations

from typing import Any

import pytest

from vault_agent.api.operation import AppContext

from .golden import call, check_golden

LOG = "log/Keeper Log.md"

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("ls_root", "ls", {}),
    ("ls_dir_casefold", "ls", {"relative_dir": "LOG"}),
    ("ls_glob_mtime", "ls", {"glob": "*.md", "sort": "mtime"}),
    ("read_range", "read", {"path": LOG, "range": {"start_line": 1, "end_line": 8}}),
    ("read_numbers", "read", {"path": "log/灯台日誌.md", "full": True, "line_numbers": True}),
    ("read_budget", "read", {"path": LOG, "full": True, "limits": {"max_chars": 300}}),
    ("read_hard_limit", "read", {"path": LOG, "range": {"start_line": 1}, "limits": {"max_chars": 200000}}),
    ("scan_first", "scan", {"path": LOG, "chunk_lines": 5}),
    ("scan_last", "scan", {"path": LOG, "cursor": {"start_line": 401}}),
    (
        "coverage_partial",
        "coverage",
        {
            "path": LOG,
            "cited_ranges": [
                {"start_line": 1, "end_line": 100},
                {"start_line": 90, "end_line": 200},
                {"start_line": 201, "end_line": 210},
                {"start_line": 300, "end_line": 999},
            ],
        },
    ),
    ("coverage_empty_file", "coverage", {"path": "empty.md", "cited_ranges": []}),
    ("audit_summary", "audit", {"artifact_path": "artifacts/summary.md", "source_path": LOG}),
    ("audit_bad", "audit", {"artifact_path": "artifacts/bad.md", "source_path": LOG}),
    ("find_exact", "find", {"query": "beacon rotation schedule"}),
    ("find_spread", "find", {"query": "lamp glass"}),
    ("find_ja", "find", {"query": "レンズの清掃"}),
    ("find_ja_loose", "find", {"query": "灯台のレンズ点検"}),
    ("find_scope_expanded", "find", {"query": "lens", "scope": {"relative_dir": "artifacts"}}),
    ("find_none", "find", {"query": "zeppelin"}),
    ("grep_regex", "grep", {"query": r"beacon|Week [23]\b", "line_numbers": True}),
    ("grep_plain_context", "grep", {"query": "WIPE THE GLASS", "mode": "plain", "context_lines": 1}),
    ("grep_loose_ja", "grep", {"query": "レンズ清掃", "mode": "loose"}),
    ("grep_fallback", "grep", {"query": "(?<=the) lamp", "limit": 2}),
    (
        "grep_glob_dir",
        "grep",
        {"query": "lens", "mode": "plain", "glob": "*.MD", "relative_dir": "resources"},
    ),
    ("grep_truncated", "grep", {"query": "Entry", "limit": 3}),
    ("search_en", "search", {"query": "beacon schedule", "limit": 3}),
    ("search_ja", "search", {"query": "灯台 点検", "limit": 3}),
    ("get_ja", "get", {"path": "log/灯台日誌.md"}),
    ("get_budget", "get", {"path": "resources/guide.md", "max_chars": 20}),
    ("related_home", "related", {"path": "Home.md"}),
    ("related_log", "related", {"path": LOG, "limit": 2}),
]


@pytest.mark.parametrize(("name", "op", "raw"), CASES, ids=[c[0] for c in CASES])
def test_golden(mctx: AppContext, name: str, op: str, raw: dict[str, Any]) -> None:
    check_golden(name, call(mctx, op, raw))


DEMO_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("demo_search_ja", "search", {"query": "東京 旅行"}),
    ("demo_search_en", "search", {"query": "lighthouse lens"}),
    ("demo_find_ja", "find", {"query": "上野"}),
    ("demo_grep_ja", "grep", {"query": "浅草|上野"}),
    ("demo_related", "related", {"path": "projects/tokyo-trip/東京旅行.md"}),
]


@pytest.mark.parametrize(("name", "op", "raw"), DEMO_CASES, ids=[c[0] for c in DEMO_CASES])
def test_golden_demo(mdemo_ctx: AppContext, name: str, op: str, raw: dict[str, Any]) -> None:
    check_golden(name, call(mdemo_ctx, op, raw))
