"""The tool list as a model reads it: size per profile, descriptions, titles, schemas."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from api.serverkit import make_context
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.ops import CATALOG
from vault_agent.api.tool_schema import input_schema, without_descriptions
from vault_agent.config import Settings
from vault_agent.server.context import close_context

GOLDEN_SCHEMAS = Path(__file__).parent / "golden" / "mcp-input-schemas.json"
UPDATE = os.environ.get("VAULT_AGENT_UPDATE_GOLDEN") == "1"
# (writes enabled, tool profile) → the most characters its tools/list may take, every tool's
# title included (issue 33). The default list's budget is 12,000 (README, issues 13, 23, 33)
# with this round's tools (vault_tasks, vault_base) in it.
BUDGETS: dict[tuple[bool, str], int | None] = {
    (False, "default"): 12_000,  # issues 13, 23 and 33: the default list stays within 12,000 characters
    (True, "default"): 17_500,  # 32 tools with the write tools (vault_query, vault_rename_tag in round 5)
    (False, "agent-files"): None,  # measured and printed, no budget set by the issue
    (True, "agent-files"): None,
}
# The first sentence says when to use the tool: "Use it …", "Call it first …" (the title says what it is).
WHEN = re.compile(r"\b(use it|call it)\b", re.IGNORECASE)
SEED_NAMES = {  # seed 000 orientation tools and seed 002 vault tools: names and schemas are contracts
    "vault_overview", "vault_tree", "vault_tags", "vault_facets",
    "vault_ls", "vault_read", "vault_find", "vault_scan", "vault_coverage", "artifact_audit",
    "vault_create", "vault_write", "vault_replace", "vault_search",
}  # fmt: skip


async def _tools_list(settings: Settings, profile: str, mode: str) -> tuple[str, list[Any]]:
    ctx = make_context(settings)
    try:
        async with Client(build_mcp_server(ctx, CATALOG, profile=profile), mode=mode) as client:
            result = await client.list_tools()
    finally:
        close_context(ctx)
    return result.model_dump_json(by_alias=True, exclude_none=True), result.tools


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(("writes", "profile"), list(BUDGETS))
def test_tools_list_fits_its_budget(vault_settings: Settings, writes: bool, profile: str, mode: str) -> None:
    """The JSON of the tools/list result as the client receives it, per profile and revision."""
    settings = dataclasses.replace(vault_settings, writes_enabled=writes)
    text, tools = asyncio.run(_tools_list(settings, profile, mode))
    expected = {
        op.mcp_name
        for op in CATALOG
        if op.agent_tool
        and (op.profile == "default" or profile == "agent-files")
        and (op.kind == "read" or writes)
    }
    print(f"tools/list {mode} writes={writes} profile={profile}: {len(text)} characters, {len(tools)} tools")
    assert {t.name for t in tools} == expected
    budget = BUDGETS[(writes, profile)]
    assert budget is None or len(text) <= budget
    # Every tool carries its title (MCP 2025-06-18: clients show it in pickers and approval
    # dialogs), a few words, and no two tools of one default list share one.
    titles = {t.name: t.title for t in tools}
    assert [name for name, title in titles.items() if not title or len(title) > 30] == []
    if profile == "default":
        assert len(set(titles.values())) == len(titles)
    assert all(f'"title":"{t.title}"' in text for t in tools)  # in what the client receives


def test_every_description_says_first_when_to_use_it() -> None:
    ops = [op for op in CATALOG if op.agent_tool]  # the person's operations are no MCP tools
    when = [op.mcp_name for op in ops if WHEN.search(op.description.split(". ")[0])]
    print(f"{len(when)} of {len(ops)} tools say in their first sentence when to use them")
    assert sorted(when) == sorted(op.mcp_name for op in ops)


def test_descriptions_are_for_a_model_not_for_us() -> None:
    """No seed numbers or HTTP details; no sentence repeated across tools; one-line params."""
    leaks, params = [], []
    sentences: dict[str, list[str]] = {}
    for op in CATALOG:
        texts = [op.description]
        for name, info in op.params.model_fields.items():
            if info.description:
                texts.append(info.description)
                if len(info.description) > 60 or "\n" in info.description:
                    params.append(f"{op.mcp_name}.{name}")
        for text in texts:
            if re.search(r"seed \d|\?q=|X-Index|HTTP|vault-agent [a-z]", text):
                leaks.append(op.mcp_name)
        for sentence in re.split(r"(?<=\.)\s", op.description):
            if len(sentence) > 50:
                sentences.setdefault(sentence, []).append(op.mcp_name)
    repeated = {s: names for s, names in sentences.items() if len(names) > 1}
    titled = [op.mcp_name for op in CATALOG if not op.title or len(op.title) > 30]  # docs name each
    assert (leaks, params, repeated, titled) == ([], [], {}, [])


def test_seed_tool_names_and_input_schemas_are_unchanged() -> None:
    """Structure (names, types, bounds, required) of every published input schema is pinned."""
    now = {op.mcp_name: without_descriptions(input_schema(op.params)) for op in CATALOG if op.agent_tool}
    if UPDATE:
        GOLDEN_SCHEMAS.write_text(json.dumps(now, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    pinned = json.loads(GOLDEN_SCHEMAS.read_text(encoding="utf-8"))
    assert set(now) >= SEED_NAMES
    assert {n: now[n] for n in SEED_NAMES} == {n: pinned[n] for n in SEED_NAMES}
    assert now == pinned


def test_compact_schemas_accept_and_refuse_what_the_models_do() -> None:
    """The compaction drops no constraint: the published schema judges sample inputs as pydantic does."""
    from jsonschema import Draft202012Validator
    from pydantic import ValidationError

    samples: list[dict[str, Any]] = [
        {},
        {"path": "a.md"},
        {"path": "a.md", "range": {"start_line": 1, "end_line": 5}},
        {"path": "a.md", "range": {"start_line": 0}},
        {"query": "x", "mode": "plain", "limit": 501},
        {"query": "x", "mode": None, "limit": 500},
        {"query": "x", "mode": "fuzzy"},
        {"query": ""},
        {"depth": 11},
        {"depth": 3, "limit": 10, "direct_only": True},
        {"path": "a.md", "cited_ranges": [{"start_line": 1, "end_line": 2}]},
        {"path": "a.md", "content": "x", "mode": "append"},
        {"query": "x", "scope": {"glob": "*.md"}, "budget": {"time_ms": 0}},
    ]
    disagreements = []
    for op in CATALOG:
        validator = Draft202012Validator(input_schema(op.params))
        for sample in samples:
            try:
                op.params.model_validate(sample)
                model_ok = True
            except ValidationError as exc:
                # Unknown keys are refused by the server, not by the published schema.
                model_ok = all(e["type"] == "extra_forbidden" for e in exc.errors())
            # Optional means absent in the published schema; the server also takes an explicit null.
            absent = {k: v for k, v in sample.items() if v is not None}
            if validator.is_valid(absent) != model_ok:
                disagreements.append((op.mcp_name, sample))
    assert disagreements == []


def test_answers_match_their_result_models(vault_settings: Settings) -> None:
    """Each read answer validates against the full JSON schema of its operation's result model."""
    from jsonschema import Draft202012Validator

    from api.test_parity import runnable
    from vault_agent.api.invoke import body_of, invoke

    extra = {"read": {"full": True}}  # vault_read needs a range or full
    ctx = make_context(vault_settings)
    failures, checked = [], []
    try:
        for op, args in runnable():
            assert op.result is not None, op.name
            body = body_of(op, invoke(op, ctx, {**args, **extra.get(op.name, {})}))
            checked.append(op.name)
            data = body["data"] if op.envelope else body
            schema = op.result.model_json_schema(by_alias=True, mode="serialization")
            errors = [e.message for e in Draft202012Validator(schema).iter_errors(data)]
            if errors:
                failures.append((op.name, errors[:2]))
    finally:
        close_context(ctx)
    assert (failures, len(checked)) == ([], len(runnable()))
    assert [op.mcp_name for op in CATALOG if op.result is None] == []
