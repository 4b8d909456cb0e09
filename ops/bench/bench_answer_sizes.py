#!/usr/bin/env python3
"""Answer sizes and the tool list, this tree beside another (issue 23): characters, not time.

    .venv/bin/python ops/bench/bench_answer_sizes.py [--baseline-tree /path/to/other/checkout]

Writes the wide synthetic vault of the tests (`tests/api/widevault.py`: 600 folders, 1,100
files in one folder, 4,200 matching lines, a 150,000-character note, 600 headings) into a
temp dir, indexes it, and for each tree (this one; the baseline's sources, e.g. an export of
main: `git archive main | tar -x -C /tmp/main-tree`) runs, in a child process importing that
tree: every operation at its largest parameters (a parameter the tree does not know is
dropped), printing the characters of each JSON answer beside the operation's budget, and the
characters of the default `tools/list` on both MCP revisions. Sizes are deterministic: no
load figure is needed, one run is enough.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import benchkit

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from vault_agent.api.ops import CATALOG
from vault_agent.api.invoke import invoke, body_of, dump_json
from vault_agent.api.operation import AppContext
from vault_agent.paths import vault_for_settings
from vault_agent.config import load_settings
from vault_agent.errors import VaultAgentError
from vault_agent.query.snapshot import SnapshotReader

largest = json.loads(sys.argv[3])
settings = load_settings({"vault": Path(sys.argv[2])}, env={})
vault = vault_for_settings(settings)
ctx = AppContext(settings=settings, vault=vault, reader=SnapshotReader(settings, vault, freshness=lambda _m: "fresh"))
sizes = {}
for name, args in largest.items():
    if name not in {op.name for op in CATALOG}:
        continue
    op = CATALOG.named(name)
    args = dict(args)
    for _ in range(5):
        try:
            text = dump_json(body_of(op, invoke(op, ctx, args)))
            break
        except VaultAgentError as exc:
            unknown = exc.message.split("'")[1] if exc.message.startswith("unknown parameter") else None
            if unknown is None or unknown not in args:
                text = dump_json(exc.to_body())
                break
            args.pop(unknown)
    sizes[op.mcp_name] = [len(text), getattr(op, "max_answer_chars", None)]

async def listed(mode):
    from mcp import Client
    from vault_agent.api.mcp_server import build_mcp_server
    async with Client(build_mcp_server(ctx, CATALOG, profile="default"), mode=mode) as client:
        result = await client.list_tools()
    return len(result.model_dump_json(by_alias=True, exclude_none=True))

tools = {mode: asyncio.run(listed(mode)) for mode in ("legacy", "2026-07-28")}
ctx.reader.close()
print(json.dumps({"sizes": sizes, "tools_list": tools}))
"""

LONG = "long/keeper-log-of-every-night-for-seven-years.md"
LARGEST = {
    "overview": {},
    "tree": {"depth": 10, "limit": 500},
    "tags": {"limit": 200},
    "facets": {"limit": 200},
    "ls": {"relative_dir": "flat", "limit": 1000},
    "read": {"path": LONG, "full": True, "limits": {"max_chars": 100_000}},
    "scan": {"path": LONG, "chunk_lines": 1000, "limits": {"max_chars": 100_000}},
    "get": {"path": LONG, "max_chars": 100_000},
    "find": {"query": "needle lamp", "budget": {"max_candidates": 10_000}},
    "grep": {"query": "needle", "limit": 500, "context_lines": 10},
    "search": {"query": "needle lamp keeper", "limit": 50},
    "related": {"path": "areas/area-000-coastal-station-records/note-000.md", "limit": 50},
    "get-note-outline": {"path": "long/handbook-with-six-hundred-sections.md"},
    "get-section-source": {"path": "long/handbook-with-six-hundred-sections.md"},
}


def measure(tree: Path, vault: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), str(vault), json.dumps(LARGEST)],
        capture_output=True, text=True, cwd=tempfile.gettempdir(), check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = benchkit.parser(__doc__)
    parser.add_argument("--baseline-tree", type=Path, help="another checkout's sources (e.g. main)")
    args = benchkit.parse(parser, smoke={})
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from api.widevault import write_wide_vault

    from vault_agent.config import load_settings
    from vault_agent.indexer.build import build_index

    with tempfile.TemporaryDirectory() as tmp:
        vault = write_wide_vault(Path(tmp) / "vault")
        build_index(load_settings({"vault": vault}, env={}), full=True)
        runs = {"this": measure(ROOT, vault)}
        if args.baseline_tree is not None:
            runs["baseline"] = measure(args.baseline_tree, vault)
    names = list(runs["this"]["sizes"])  # type: ignore[call-overload]
    head = "| tool | " + " | ".join(f"{k} (chars)" for k in runs) + " | budget |"
    print(head)
    print("| --- |" + " --- |" * (len(runs) + 1))
    for name in names:
        cells = [f"{runs[k]['sizes'].get(name, ['-'])[0]:,}" for k in runs]  # type: ignore[attr-defined]
        budget = runs["this"]["sizes"][name][1]  # type: ignore[index]
        print(f"| `{name}` | " + " | ".join(cells) + f" | {budget:,} |")
    for mode in ("legacy", "2026-07-28"):
        cells = [f"{runs[k]['tools_list'][mode]:,}" for k in runs]  # type: ignore[index]
        print(f"| tools/list ({mode}) | " + " | ".join(cells) + " | 10,000 |")


if __name__ == "__main__":
    main()
