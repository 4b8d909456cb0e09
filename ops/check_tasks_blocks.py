#!/usr/bin/env python3
"""Run every ```tasks block of a real vault and report which run and which are refused.

    python ops/check_tasks_blocks.py [VAULT] [--today YYYY-MM-DD]

VAULT defaults to ../shared/corpora/obsidian-tasks-docs/vault (the Tasks plugin's own
documentation). The index is built into a temporary state dir (the vault is only read), then
each block is run as `vault_tasks(block="NOTE#N")` runs it. Documentation quotes most of its
examples inside other code blocks (````text … ```tasks … ```` ````), which Obsidian does
not run; they are run too, as `vault_tasks(query=…)` with their note's placeholders, and
listed apart as "quoted". A refused block is listed with
the construct its INVALID_QUERY names (`filter by function`, a placeholder, a preset…); a
block that runs is listed with how many tasks it matched. Prints a table; exits 0 (a report),
1 when a block fails with anything but a named refusal.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from markdown_it import MarkdownIt  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.errors import InvalidQuery, VaultAgentError  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query.lines import decode  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.query.tasks.blocks import blocks_of  # noqa: E402
from vault_agent.query.tasks.lang_api import QueryRequest, run_tasks_query  # noqa: E402
from vault_agent.query.tasks.lang_lines import QueryFile  # noqa: E402

DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "obsidian-tasks-docs" / "vault"


_MD = MarkdownIt("commonmark")


def notes(vault: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")):
            out.append((rel, decode(path.read_bytes())))
    return out


def quoted_blocks(text: str) -> list[str]:
    """Tasks blocks quoted inside other fenced code blocks (one level down)."""
    out = []
    for token in _MD.parse(text):
        words = token.info.split() if token.type == "fence" else ["tasks"]
        if words and words[0] != "tasks":
            out += [
                inner.content
                for inner in _MD.parse(token.content)
                if inner.type == "fence" and inner.info.split()[:1] == ["tasks"]
            ]
    return out


def _clock(today: dt.date) -> functools.partial[dt.datetime]:
    return functools.partial(dt.datetime.combine, today, dt.time(12), dt.UTC)


def run_quoted(reader: SnapshotReader, today: dt.date, path: str, text: str) -> str:
    """A quoted example as `vault_tasks(query=…)` runs it, its note's placeholders filled in."""
    for name, value in QueryFile(path).values().items():
        text = re.sub(r"\{\{\s*" + re.escape(name) + r"\s*\}\}", value.replace("\\", "\\\\"), text)
    out = run_tasks_query(reader, QueryRequest(query=text, limit=500), clock=_clock(today))
    groups = f", {len(out.data.groups)} groups" if out.data.groups is not None else ""
    return f"{out.data.matched} tasks matched{groups}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", nargs="?", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    args = parser.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        settings = Settings(vault=args.vault, index_dir=Path(work) / "index")
        manifest = build_index(settings, full=True)
        reader = SnapshotReader(settings, vault_for_settings(settings))
        try:
            found = notes(args.vault)
            addresses = [b.address() for rel, text in found for b in blocks_of(rel, text, [])]
            quoted = [(rel, q) for rel, text in found for q in quoted_blocks(text)]
            print(
                f"{len(addresses)} tasks blocks and {len(quoted)} quoted in {manifest.note_count} notes; today {args.today}\n"
            )
            ran = refused = 0
            for rel, text in quoted:
                try:
                    print(f"runs     {rel} (quoted): {run_quoted(reader, args.today, rel, text)}")
                    ran += 1
                except InvalidQuery as err:
                    refused += 1
                    print(f"refused  {rel} (quoted): {err.message.removeprefix('tasks query: ')}")
            for address in addresses:
                try:
                    out = run_tasks_query(
                        reader, QueryRequest(block=address, limit=500), clock=_clock(args.today)
                    )
                    ran += 1
                    groups = f", {len(out.data.groups)} groups" if out.data.groups is not None else ""
                    print(f"runs     {address}: {out.data.matched} tasks matched{groups}")
                except InvalidQuery as err:
                    refused += 1
                    print(f"refused  {address}: {err.message.removeprefix('tasks query: ')}")
                except VaultAgentError as err:
                    failed += 1
                    print(f"FAILED   {address}: {err.code} {err.message}")
            print(f"\n{ran} run, {refused} refused by name, {failed} failed")
        finally:
            reader.close()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
