"""Names as people type them, on every note-path tool and every surface (issue 23 item 2).

A table over the catalog: every operation with a `NoteName` parameter (operation.
note_name_params, so a new tool is in the table the day it joins the catalog) × every
resolution step, in process, over HTTP, over MCP (the SDK's in-memory client on the
agent-files profile, so seed 003's aliases are listed too) and through the CLI (every tool
with one step, `read` with every step: the other combinations reach the same route). Each
answer must equal the answer to the exact path, plus one `NAME_RESOLVED` warning naming the
step (beside a raw contract: MCP `_meta.warnings`, HTTP `X-Index-Warnings`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from api.serverkit import VAULT_AGENT, ServerThread, make_context, serving
from vault_agent.api.invoke import body_of, invoke, to_jsonable
from vault_agent.api.mcp_server import build_mcp_server
from vault_agent.api.operation import AppContext, Operation, note_name_params
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings, load_settings
from vault_agent.indexer.build import build_index
from vault_agent.server.context import close_context

TARGET = "projects/alpha/Plan Doc.md"
NOTES = {
    TARGET: (
        "---\ntitle: Alpha Roadmap\naliases: [Roadmap A]\ntags: [plan]\n---\n"
        "# Plan [L6]\n\nThe plan.\n\n## Install\n\nstep one\n\n## Usage\n\nuse it\n"
    ),
    "projects/beta/other.md": "# Other\n\nSee [[Plan Doc]] for the plan.\n",
}
# Each resolution step, as a person would type the target note.
FORMS: dict[str, str] = {
    "exact": TARGET,
    "case": "PROJECTS/Alpha/plan doc.md",
    "extension": "projects/alpha/Plan Doc",
    "wikilink": "[[Plan Doc]]",
    "wikilink|alias": "[[Plan Doc|the plan]]",
    "wikilink#heading": "[[projects/alpha/Plan Doc#Install]]",
    "basename": "plan doc.md",
    "title": "alpha   ROADMAP",
    "alias": "roadmap a",
}
STEP = {"wikilink|alias": "wikilink", "wikilink#heading": "wikilink"}
# The other arguments an operation needs to answer at all (a new operation that needs some
# fails below with INVALID_PARAMETER until it is given them here).
EXTRA: dict[str, dict[str, Any]] = {
    "read": {"full": True},
    "coverage": {"cited_ranges": [{"start_line": 1, "end_line": 2}]},
}
CLI_FLAGS: dict[str, list[str]] = {"read": ["--full"], "coverage": ["--range", "1-2"]}


def cases() -> list[tuple[Operation, str]]:
    """(operation, note-name parameter) of every read operation taking a note name."""
    return [(op, name) for op in CATALOG.of_kind("read") for name in note_name_params(op.params)]


def _args(op: Operation, param: str, typed: str) -> dict[str, Any]:
    args = {name: TARGET for name in note_name_params(op.params)}
    return {**args, **EXTRA.get(op.name, {}), param: typed}


def _reads_sections(op: Operation) -> bool:
    return "section_id" in op.params.model_fields


def _expected_args(op: Operation, param: str, form: str) -> dict[str, Any]:
    """What the exact-path call that must answer the same looks like."""
    args = _args(op, param, TARGET)
    if form == "wikilink#heading" and _reads_sections(op):
        args = {k: v for k, v in args.items() if k != "full"}
        args["heading"] = "Install"
    return args


@pytest.fixture(scope="module")
def names_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    vault = tmp_path_factory.mktemp("names") / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    settings = load_settings({"vault": vault}, env={})
    build_index(settings, full=True)
    return settings


@pytest.fixture(scope="module")
def names_server(names_settings: Settings) -> Iterator[ServerThread]:
    with serving(names_settings) as thread:
        yield thread


def _forget_audits(ctx: AppContext) -> None:
    """artifact_audit remembers each pair's coverage (marginal gain): start every call afresh."""
    ctx.audit_history.clear()


def _in_process(ctx: AppContext, op: Operation, args: dict[str, Any]) -> tuple[Any, list[dict[str, str]]]:
    _forget_audits(ctx)
    outcome = invoke(op, ctx, args)
    return to_jsonable(outcome.data), [w.model_dump() for w in outcome.warnings]


def _resolved(warnings: list[dict[str, str]]) -> list[str]:
    return [w["message"] for w in warnings if w["code"] == "NAME_RESOLVED"]


def test_every_note_name_parameter_is_in_the_table() -> None:
    """A read operation whose parameter holds a note or file path must be a NoteName; only
    folder parameters are not (and write tools, which never guess)."""
    folders = {
        ("ls", "relative_dir"),
        ("list_files", "path"),
        ("search_files", "path"),
        ("grep", "relative_dir"),
    }
    named = {(op.name, p) for op, p in cases()}
    pathlike = {
        (op.name, name)
        for op in CATALOG.of_kind("read")
        for name in op.params.model_fields
        if name == "path" or name.endswith("_path")
    }
    assert pathlike - folders <= named
    assert {op.name for op, _ in cases()} >= {
        "read", "scan", "get", "info", "coverage", "audit", "related", "read_file", "get_file_info",
        "get-note-outline", "get-document-tree", "get-section-source", "get-metadata-facets",
    }  # fmt: skip


@pytest.mark.parametrize("form", list(FORMS))
def test_every_tool_resolves_every_step_in_process(names_settings: Settings, form: str) -> None:
    ctx = make_context(names_settings)
    failures: list[tuple[str, str, list[Any]]] = []
    try:
        for op, param in cases():
            want_data, want_warnings = _in_process(ctx, op, _expected_args(op, param, form))
            got_data, got_warnings = _in_process(ctx, op, _args(op, param, FORMS[form]))
            step = STEP.get(form, form)
            expected_resolved = [] if step == "exact" else [f"(resolved_from: {step})"]
            resolved = _resolved(got_warnings)
            if (
                got_data != want_data
                or [m[m.index("(") :].split(";")[0] for m in resolved] != expected_resolved
            ):
                failures.append((op.name, param, resolved))
            others = [w for w in got_warnings if w["code"] != "NAME_RESOLVED"]
            if others != [w for w in want_warnings if w["code"] != "NAME_RESOLVED"]:
                failures.append((op.name, param, others))
    finally:
        close_context(ctx)
    assert failures == []


def _http(server: ServerThread, op: Operation, args: dict[str, Any]) -> tuple[int, dict[str, str], str]:
    if op.http_method == "GET":
        query = {k: json.dumps(v) if isinstance(v, (dict, list, bool)) else v for k, v in args.items()}
        return server.request("GET", op.http_path + "?" + urllib.parse.urlencode(query))
    return server.request("POST", op.http_path, body=json.dumps(args).encode())


def test_every_tool_resolves_every_step_over_http(names_server: ServerThread) -> None:
    failures = []
    for op, param in cases():
        if op.mcp_only:
            continue
        for form, typed in FORMS.items():
            _forget_audits(names_server.ctx)
            status, headers, text = _http(names_server, op, _args(op, param, typed))
            _forget_audits(names_server.ctx)
            expected = body_of(op, invoke(op, names_server.ctx, _args(op, param, typed)))
            warnings = (
                expected.get("warnings") if op.envelope else json.loads(headers.get("X-Index-Warnings", "[]"))
            )
            step = STEP.get(form, form)
            ok = status == 200 and json.loads(text) == expected
            ok = ok and (
                step == "exact" or any(f"(resolved_from: {step})" in m for m in _resolved(warnings or []))
            )
            if not ok:
                failures.append((op.name, param, form, status, text[:200]))
    assert failures == []


def test_every_tool_resolves_every_step_over_mcp(names_settings: Settings) -> None:
    ctx = make_context(names_settings)

    async def run() -> list[Any]:
        failures = []
        async with Client(build_mcp_server(ctx, CATALOG, profile="agent-files")) as client:
            for op, param in cases():
                for form, typed in FORMS.items():
                    _forget_audits(ctx)
                    result = await client.call_tool(op.mcp_name, _args(op, param, typed))
                    _forget_audits(ctx)
                    expected = body_of(op, invoke(op, ctx, _args(op, param, typed)))
                    meta = (
                        (result.meta or {}).get("warnings", []) if not op.envelope else expected["warnings"]
                    )
                    step = STEP.get(form, form)
                    ok = not result.is_error and result.structured_content == expected
                    ok = ok and (
                        step == "exact" or any(f"(resolved_from: {step})" in m for m in _resolved(meta))
                    )
                    if not ok:
                        first = result.content[0]
                        assert isinstance(first, types.TextContent), first
                        failures.append((op.mcp_name, param, form, first.text[:200]))
        return failures

    try:
        assert asyncio.run(run()) == []
    finally:
        close_context(ctx)


def _cli(server: ServerThread, settings: Settings, op: Operation, param: str, typed: str) -> str:
    positional = [typed if name == param else TARGET for name in op.cli_args]
    proc = subprocess.run(
        [VAULT_AGENT, op.name, *positional, *CLI_FLAGS.get(op.name, []), "--json"]
        + ["--vault", str(settings.vault), "--server", server.url, "--token", server.token],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(Path(settings.vault)),
    )
    assert proc.returncode == 0, (op.name, typed, proc.stderr[-300:])
    return proc.stdout


def test_every_tool_resolves_names_through_the_cli(
    names_server: ServerThread, names_settings: Settings
) -> None:
    """Every CLI command taking a note name, with a title; `read` with every step."""
    runs = [(op, param, FORMS["title"]) for op, param in cases() if not op.mcp_only]
    runs += [
        (CATALOG.named("read"), "path", typed) for form, typed in FORMS.items() if form != "wikilink#heading"
    ]
    failures = []
    for op, param, typed in runs:
        _forget_audits(names_server.ctx)
        out = _cli(names_server, names_settings, op, param, typed)
        _forget_audits(names_server.ctx)
        status, _, text = _http(names_server, op, _args(op, param, typed))
        if out != text + "\n":
            failures.append((op.name, param, typed, out[:200], text[:200]))
    assert failures == []


def test_cli_reads_a_section_by_its_flags(names_server: ServerThread, names_settings: Settings) -> None:
    """`--section-id` and `--heading` reach the same read as the HTTP parameters."""
    runs = [
        (["read", "Plan Doc", "--heading", "Install"], "read", {"path": "Plan Doc", "heading": "Install"}),
        (
            ["scan", "alpha roadmap", "--section-id", "h2-usage-0003"],
            "scan",
            {"path": "alpha roadmap", "section_id": "h2-usage-0003"},
        ),
        (
            ["get", TARGET, "--heading", "plan [l6] > usage"],
            "get",
            {"path": TARGET, "heading": "plan [l6] > usage"},
        ),
    ]
    for argv, name, args in runs:
        proc = subprocess.run(
            [VAULT_AGENT, *argv, "--json", "--vault", str(names_settings.vault)]
            + ["--server", names_server.url, "--token", names_server.token],
            capture_output=True,
            text=True,
            timeout=120,
        )
        status, _, text = _http(names_server, CATALOG.named(name), args)
        assert (proc.returncode, proc.stdout) == (0, text + "\n"), proc.stderr[-300:]
        assert status == 200 and (name != "get" or '"section":' in text)
