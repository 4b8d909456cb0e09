"""Seed 002's stop rule end to end: a scripted agent that only follows next_actions."""

from __future__ import annotations

from typing import Any

from vault_agent.api.operation import AppContext

from .golden import call

TOOL_TO_OP = {
    "vault_find": "find",
    "vault_read": "read",
    "vault_scan": "scan",
    "vault_coverage": "coverage",
    "artifact_audit": "audit",
    "vault_search": "grep",
}
MAX_CALLS = 12


def run_agent(ctx: AppContext, query: str, artifact: str) -> list[tuple[str, dict[str, Any]]]:
    """Follow next_actions[0] from vault_find until `stop`; the agent only adds what it owns:
    the ranges it has read (cited_ranges) and its artifact's path."""
    trace: list[tuple[str, dict[str, Any]]] = []
    read: dict[str, list[dict[str, int]]] = {}
    tool = "vault_find"
    params: dict[str, Any] = {"query": query}
    for _ in range(MAX_CALLS):
        if tool == "vault_coverage":
            params = {**params, "cited_ranges": read.get(params["path"], [])}
        if tool == "artifact_audit":
            params = {
                "artifact_path": artifact,
                **params,
                "cited_ranges": read.get(params["source_path"], []),
            }
        trace.append((tool, params))
        data = call(ctx, TOOL_TO_OP[tool], params)["data"]
        if tool in ("vault_scan", "vault_read"):
            read.setdefault(params["path"], []).append(data["applied_range"])
        actions = data.get("next_actions", [])
        assert actions, f"{tool} proposed nothing"
        if actions[0]["type"] == "stop":
            trace.append(("stop", {}))
            return trace
        tool, params = actions[0]["type"], actions[0]["params"]
    raise AssertionError(f"no stop within {MAX_CALLS} calls: {[t for t, _ in trace]}")


def test_find_scan_coverage_audit_stops(ctx: AppContext) -> None:
    trace = run_agent(ctx, "lamp glass", "artifacts/summary.md")
    log = "log/Keeper Log.md"
    assert trace == [
        ("vault_find", {"query": "lamp glass"}),
        ("vault_scan", {"path": log}),
        ("vault_scan", {"path": log, "cursor": {"start_line": 201}}),
        ("vault_scan", {"path": log, "cursor": {"start_line": 401}}),
        (
            "vault_coverage",
            {
                "path": log,
                "cited_ranges": [
                    {"start_line": 1, "end_line": 200},
                    {"start_line": 201, "end_line": 400},
                    {"start_line": 401, "end_line": 420},
                ],
            },
        ),
        (
            "artifact_audit",
            {
                "artifact_path": "artifacts/summary.md",
                "source_path": log,
                "cited_ranges": [
                    {"start_line": 1, "end_line": 200},
                    {"start_line": 201, "end_line": 400},
                    {"start_line": 401, "end_line": 420},
                ],
            },
        ),
        ("stop", {}),
    ]


def test_partial_coverage_scans_the_gap_first(ctx: AppContext) -> None:
    log = "log/Keeper Log.md"
    first = call(ctx, "coverage", {"path": log, "cited_ranges": [{"start_line": 1, "end_line": 100}]})["data"]
    assert first["next_actions"] == [
        {"type": "vault_scan", "confidence": 0.761905, "params": {"path": log, "cursor": {"start_line": 101}}}
    ]
    audit1 = call(
        ctx,
        "audit",
        {
            "artifact_path": "artifacts/summary.md",
            "source_path": log,
            "cited_ranges": [{"start_line": 1, "end_line": 100}],
        },
    )["data"]
    assert (audit1["marginal_gain"], audit1["needs_forced_full_scan"]) == (None, True)
    assert audit1["next_actions"][0] == {
        "type": "vault_scan",
        "confidence": 0.8,
        "params": {"path": log, "cursor": {"start_line": 101}},
    }
    audit2 = call(
        ctx,
        "audit",
        {
            "artifact_path": "artifacts/summary.md",
            "source_path": log,
            "cited_ranges": [{"start_line": 1, "end_line": 380}],
        },
    )["data"]
    # 0.904762 − 0.238095: still gaining with lines left → another scan (seed 002 rule 3).
    assert (audit2["marginal_gain"], audit2["needs_forced_full_scan"]) == (0.666667, True)
    assert audit2["next_actions"][0]["params"] == {
        "path": log,
        "cursor": {"start_line": 381},
        "chunk_lines": 40,
    }
    audit3 = call(
        ctx,
        "audit",
        {
            "artifact_path": "artifacts/summary.md",
            "source_path": log,
            "cited_ranges": [{"start_line": 1, "end_line": 390}],
        },
    )["data"]
    assert (audit3["marginal_gain"], audit3["needs_forced_full_scan"]) == (0.023809, False)
    assert audit3["next_actions"] == [{"type": "stop", "confidence": 1.0, "params": None}]
