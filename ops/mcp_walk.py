#!/usr/bin/env python3
"""The 25-request walk of docs/mcp.md: typical agent requests on the demo vault, through the
real MCP SDK client, with the tools the server lists today.

    .venv/bin/python ops/mcp_walk.py            (prints the markdown table)

Copies `fixtures/demo` into a temp dir, indexes it and starts `vault-agent mcp` (stdio, the
writer: it embeds the notes, and the walk waits until search is hybrid). Each request has the
calls that serve it today and, where another engineer's feature will serve it in fewer
calls, the planned calls (`vault_query`, section reads, name resolution, tag rename). A
planned plan runs first when the server lists what it needs and its answer holds what the
request asks for; otherwise today's plan runs. Each row: the calls made, the characters of
their answers (the text content the model reads), and whether the last answer holds the
expected text. Nothing is written outside the temp dir; the server process is stopped.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

VAULT_AGENT = str(Path(sys.executable).parent / "vault-agent")
Call = tuple[str, dict[str, Any]]
LENS = "projects/lighthouse/Lens Cleaning.md"
HANDBOOK = "resources/handbook.md"


@dataclass(frozen=True)
class Request:
    ask: str  # what a person asks the agent
    today: list[Call]  # the calls that serve it with today's tools
    expect: str  # text the last answer must hold for the request to count as served
    planned: list[Call] = field(default_factory=list)  # fewer calls, once a feature lands
    needs: str = ""  # the feature the planned calls need (and who builds it)
    # A planned call whose tool exists but lacks the feature (a parameter, name resolution)
    # must not count: the parameter that has to be in the tool's schema.
    needs_param: tuple[str, str] | None = None


REQUESTS: list[Request] = [
    Request("What is in this vault?", [("vault_overview", {})], "projects"),
    Request("Which folders hold the notes?", [("vault_tree", {"depth": 3})], "projects/lighthouse"),
    Request(
        "Find the note called Lens Cleaning",
        [("search", {"query": "Lens Cleaning", "group": "note", "limit": 3})],
        LENS,
        [("vault_stat", {"path": "Lens Cleaning"})],
        "name resolution (sections)",
    ),
    Request(
        "Open Project Lighthouse",
        [
            ("search", {"query": "Project Lighthouse", "group": "note", "limit": 1}),
            ("get_note", {"path": "projects/lighthouse/Project Lighthouse.md"}),
        ],
        "Restore the old lighthouse model",
        [("get_note", {"path": "Project Lighthouse"})],
        "name resolution (sections)",
    ),
    Request(
        "How do I wipe dust off the glass optics?",
        [("search", {"query": "how do I wipe dust off the glass optics", "limit": 3})],
        LENS,
    ),
    Request(
        "Summarise the handbook's section on search",
        # The heading lines (with their numbers) say where the section starts and ends.
        [
            ("vault_search", {"query": "^#{1,3} ", "glob": "handbook.md", "line_numbers": True}),
            ("vault_read", {"path": HANDBOOK, "range": {"start_line": 28, "end_line": 36}}),
        ],
        "Search details",
        [("vault_read", {"path": HANDBOOK, "heading": "3. Search"})],
        "section reads (sections)",
        ("vault_read", "heading"),
    ),
    Request("Which tags are used?", [("vault_tags", {})], "daily"),
    Request(
        "Which notes are tagged #daily?",
        [("vault_search", {"query": "tags:.*daily", "line_numbers": True})],
        "daily/2026-01-05.md",
        [("vault_query", {"tags": ["daily"]})],
        "vault_query (query)",
    ),
    Request(
        "Which notes have status: active?",
        [("vault_facets", {})],
        "areas/gardening.md",
        [("vault_query", {"where": [{"field": "status", "op": "=", "value": "active"}]})],
        "vault_query (query)",
    ),
    Request(
        "What changed this week?",
        [("vault_ls", {"glob": "**/*.md", "sort": "mtime", "limit": 10})],
        "mtime",
        [("vault_query", {"sort": "-mtime", "limit": 10})],
        "vault_query (query)",
    ),
    Request(
        "Rename the tag #todo to #later",
        [("vault_search", {"query": "todo", "mode": "plain", "line_numbers": True})],
        "later",
        [
            ("vault_rename_tag", {"old": "todo", "new": "later"}),  # the dry run's diffs, then apply
            ("vault_rename_tag", {"old": "todo", "new": "later", "apply": True}),
        ],
        "tag rename (tagrel)",
    ),
    Request(
        "What does the glossary say about a Fresnel lens?",
        [("vault_search", {"query": "Fresnel", "context_lines": 1})],
        "concentric rings",
    ),
    Request(
        "Show the kickoff meeting notes",
        [
            ("search", {"query": "kickoff meeting", "group": "note", "limit": 1}),
            ("get_note", {"path": "projects/lighthouse/meetings/2026-01-08 kickoff.md"}),
        ],
        "kickoff",
        [("get_note", {"path": "2026-01-08 kickoff"})],
        "name resolution (sections)",
    ),
    Request(
        "How much may hobby projects cost this year?",
        [("search", {"query": "hobby projects budget", "limit": 3})],
        "300",
    ),
    Request(
        "Which notes link to Lens Cleaning?",
        [("search", {"query": "Lens Cleaning", "group": "note", "limit": 1}), ("related", {"path": LENS})],
        "daily/2026-01-06.md",
        [("related", {"path": "Lens Cleaning"})],
        "name resolution (sections)",
    ),
    Request(
        "Read the whole handbook",
        [("search", {"query": "handbook", "group": "note", "limit": 1}), ("vault_scan", {"path": HANDBOOK})],
        "10. Tokens",
        [("vault_scan", {"path": "handbook"})],
        "name resolution (sections)",
    ),
    Request("What is in the inbox?", [("vault_ls", {"relative_dir": "inbox"})], "inbox/quick idea.md"),
    Request(
        "What is still to do?",
        [("vault_search", {"query": "(?i)todo|remember to", "line_numbers": True})],
        "Remember to sort the inbox",
    ),
    Request("Is the index up to date?", [("vault_status", {})], "fresh"),
    Request(
        "Which project is the Tokyo trip note filed under?",
        [
            ("search", {"query": "東京旅行", "group": "note", "limit": 1}),
            ("get_metadata_facets", {"path": "projects/tokyo-trip/東京旅行.md"}),
        ],
        "tokyo-trip",
        [("get_metadata_facets", {"path": "東京旅行"})],
        "name resolution (sections)",
    ),
    Request("浅草の予定は？", [("search", {"query": "浅草", "limit": 3})], "浅草"),
    Request(
        "Outline the handbook",
        [
            ("search", {"query": "handbook", "group": "note", "limit": 1}),
            ("get_note_outline", {"path": HANDBOOK}),
        ],
        "Outlines details",
        [("get_note_outline", {"path": "handbook"})],
        "name resolution (sections)",
    ),
    Request(
        "How do I make lentil soup?",
        [
            ("search", {"query": "lentil soup", "group": "note", "limit": 1}),
            ("get_note", {"path": "areas/recipes/Lentil Soup.md"}),
        ],
        "Lentil",
        [("get_note", {"path": "Lentil Soup"})],
        "name resolution (sections)",
    ),
    Request(
        "What did I do on January 6?",
        [("search", {"query": "2026-01-06", "group": "note", "limit": 1})],
        "Cleaned the lighthouse lens",
    ),
    Request(
        "Which notes are plans (type: plan)?",
        [("vault_facets", {})],
        "projects/tokyo-trip/東京旅行.md",
        [("vault_query", {"where": [{"field": "type", "op": "=", "value": "plan"}]})],
        "vault_query (query)",
    ),
]


@dataclass
class Row:
    request: Request
    calls: list[str]
    chars: int
    served: bool
    planned_used: bool


def _text(result: Any) -> str:
    return "".join(str(getattr(block, "text", "")) for block in result.content)


async def _run(client: Client, calls: list[Call]) -> tuple[list[str], int, str, bool]:
    """Run a plan; a later call's path must come from the answer before it (no guessing)."""
    names, chars, last, ok = [], 0, "", True
    for i, (name, args) in enumerate(calls):
        if i and isinstance(args.get("path"), str) and args["path"] not in last:
            ok = False  # the agent could not have known this path
        result = await client.call_tool(name, args)
        last = _text(result)
        names.append(name)
        chars += len(last)
        ok = ok and not result.is_error
    return names, chars, last, ok


def _available(req: Request, schemas: dict[str, dict[str, Any]]) -> bool:
    if not req.planned or any(name not in schemas for name, _ in req.planned):
        return False
    if req.needs_param is not None:
        tool, param = req.needs_param
        return param in schemas[tool].get("properties", {})
    return True


async def walk(client: Client) -> tuple[list[Row], int, int]:
    listed = await client.list_tools()
    schemas = {tool.name: tool.input_schema for tool in listed.tools}
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True))
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # hybrid search once the writer embedded the notes
        probe = json.loads(_text(await client.call_tool("search", {"query": "lens", "limit": 1})))
        if not any(w["code"].startswith("SEMANTIC_") for w in probe.get("warnings", [])):
            break
        await asyncio.sleep(0.5)
    rows = []
    for req in REQUESTS:
        if _available(req, schemas):
            names, chars, last, ok = await _run(client, req.planned)
            if ok and req.expect in last:
                rows.append(Row(req, names, chars, True, True))
                continue
        names, chars, last, ok = await _run(client, req.today)
        rows.append(Row(req, names, chars, ok and req.expect in last, False))
    return rows, size, len(listed.tools)


def table(rows: list[Row], size: int, count: int) -> str:
    out = [
        f"tools/list: {count} tools, {size:,} characters",
        "",
        "| # | request | calls → tools | answer chars | served | with the planned feature |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, row in enumerate(rows, 1):
        req = row.request
        planned = " → ".join(name for name, _ in req.planned)
        if row.planned_used:
            later = f"used: {req.needs}"
        elif req.planned:
            later = f"{len(req.planned)} call ({planned}): needs {req.needs}"
        else:
            later = ""
        tools = " → ".join(row.calls)
        mark = "yes" if row.served else "**no**"
        out.append(f"| {i} | {req.ask} | {len(row.calls)}: {tools} | {row.chars:,} | {mark} | {later} |")
    served = sum(r.served for r in rows)
    within = sum(r.served and len(r.calls) <= 2 for r in rows)
    out += ["", f"served: {served} of {len(rows)}; in at most 2 calls: {within}"]
    return "\n".join(out)


async def main() -> None:
    from vault_agent.config import load_settings
    from vault_agent.indexer.build import build_index

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "demo"
        shutil.copytree(ROOT / "fixtures" / "demo", vault, ignore=shutil.ignore_patterns(".vault-agent"))
        build_index(load_settings({"vault": vault}, env={}), full=True)
        params = StdioServerParameters(
            command=VAULT_AGENT,
            # Writes on: request 11 renames a tag (the list is then the write profile's; the
            # default read-only list is pinned by tests/api/test_tool_list.py).
            args=["mcp", "--vault", str(vault), "--allow-writes"],
            env={"VAULT_AGENT_LOG_LEVEL": "WARNING"},
            cwd=tmp,
        )
        async with Client(params, mode="legacy") as client:  # type: ignore[arg-type]
            rows, size, count = await walk(client)
    print(table(rows, size, count))


if __name__ == "__main__":
    asyncio.run(main())
