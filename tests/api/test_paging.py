"""Paged listings (issue 23): vault_search, vault_ls and get_conversation walk a whole
listing page by page, never repeating or skipping an item, each page within its budget.

The expected listings are computed here from the files themselves (plain Python over the
wide vault), not from the index.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.serverkit import make_context
from api.widevault import write_wide_vault
from vault_agent.api.invoke import body_of, dump_json, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings, load_settings
from vault_agent.conversations.store import ConversationStore
from vault_agent.errors import InvalidParameter
from vault_agent.indexer.build import build_index
from vault_agent.query.grep import SEARCH_MAX_CHARS
from vault_agent.query.limits import LS_MAX_CHARS
from vault_agent.server.context import close_context


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = write_wide_vault(tmp_path_factory.mktemp("paging") / "vault")
    settings = load_settings({"vault": root}, env={})
    build_index(settings, full=True)
    return settings


@pytest.fixture(scope="module")
def ctx(wide: Settings) -> Iterator[AppContext]:
    context = make_context(wide)
    yield context
    close_context(context)


def call(ctx: AppContext, name: str, args: dict[str, Any]) -> dict[str, Any]:
    op = CATALOG.named(name)
    body = body_of(op, invoke(op, ctx, args))
    assert len(dump_json(body)) <= op.max_answer_chars
    return body


def walk(ctx: AppContext, name: str, args: dict[str, Any], items: str) -> list[list[dict[str, Any]]]:
    """Every page of a listing, following next_cursor to the end."""
    pages, cursor = [], None
    while True:
        data = call(ctx, name, {**args, **({"cursor": cursor} if cursor else {})})["data"]
        pages.append(data[items])
        cursor = data.get("next_cursor")
        if not cursor:
            return pages
        assert len(pages) < 500


def disk_lines(root: Path, pattern: str) -> list[tuple[str, int]]:
    """(path, line) of every line of every note matching `pattern`, in path/line order."""
    rx = re.compile(pattern)
    out = []
    for path in sorted(p for p in root.rglob("*.md") if ".vault-agent" not in p.parts):
        rel = path.relative_to(root).as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        body_start = lines.index("---", 1) + 1 if lines and lines[0] == "---" else 0
        out += [(rel, i + 1) for i, line in enumerate(lines) if i >= body_start and rx.search(line)]
    return sorted(out)


@pytest.mark.parametrize("source", ["snapshot", "disk"])
def test_vault_search_pages_cover_every_line_once(ctx: AppContext, wide: Settings, source: str) -> None:
    """Across notes from the snapshot; within one long note from the disk (no index)."""
    run = ctx if source == "snapshot" else dataclasses.replace(ctx, reader=None)  # type: ignore[arg-type]
    scope = {} if source == "snapshot" else {"relative_dir": "long"}
    pages = walk(run, "grep", {"query": "needle", "limit": 500, "line_numbers": True, **scope}, "results")
    got = [(r["path"], r["line"]) for page in pages for r in page]
    expected = disk_lines(wide.vault, "needle")
    assert got == (expected if source == "snapshot" else [h for h in expected if h[0].startswith("long/")])
    assert len(pages) > 3  # 2,500 lines in one note alone take many pages
    print(f"vault_search: {len(got)} lines in {len(pages)} pages")
    for page in pages:
        assert len(dump_json(page)) <= SEARCH_MAX_CHARS


def test_vault_search_page_cut_by_characters_says_so(ctx: AppContext) -> None:
    body = call(ctx, "grep", {"query": "needle", "limit": 500})
    assert body["data"]["next_cursor"] and len(body["data"]["results"]) < 500
    [warning] = body["warnings"]
    assert warning["code"] == "RESULTS_TRUNCATED"
    assert warning["message"].startswith(
        f"more matching lines than this page holds (the {SEARCH_MAX_CHARS:,}"
    )


def _disk_entries(folder: Path, root: Path) -> list[dict[str, Any]]:
    out = []
    for entry in os.scandir(folder):
        st = entry.stat()
        mtime = dt.datetime.fromtimestamp(int(st.st_mtime), tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        rel = Path(entry.path).relative_to(root).as_posix()
        is_dir = entry.is_dir()
        out.append(
            {
                "path": rel,
                "type": "dir" if is_dir else "file",
                "size_bytes": None if is_dir else st.st_size,
                "mtime": mtime,
                "_ns": st.st_mtime_ns,
            }
        )
    return out


@pytest.mark.parametrize("sort", ["name", "mtime"])
def test_vault_ls_pages_cover_every_entry_once(ctx: AppContext, wide: Settings, sort: str) -> None:
    flat = wide.vault / "flat"
    for i, path in enumerate(sorted(flat.iterdir())):  # mtimes out of name order, with ties
        stamp = 1_767_225_600 + (i * 7919) % 500
        os.utime(path, (stamp, stamp))
    expected = _disk_entries(flat, wide.vault)
    if sort == "mtime":
        expected.sort(key=lambda e: (-e["_ns"], e["path"]))
    else:
        expected.sort(key=lambda e: e["path"])
    pages = walk(ctx, "ls", {"relative_dir": "flat", "sort": sort, "limit": 150}, "entries")
    assert [e for page in pages for e in page] == [
        {k: v for k, v in e.items() if k != "_ns"} for e in expected
    ]
    assert [len(p) for p in pages[:-1]] == [150] * (len(pages) - 1)
    big = call(ctx, "ls", {"relative_dir": "flat", "limit": 1000})["data"]
    assert len(dump_json(big["entries"])) <= LS_MAX_CHARS < len(dump_json(expected))


def test_vault_ls_default_page_and_a_bad_cursor(ctx: AppContext) -> None:
    data = call(ctx, "ls", {"relative_dir": "flat"})["data"]
    assert len(data["entries"]) == 100 and data["next_cursor"]
    with pytest.raises(
        InvalidParameter, match="^parameter 'cursor' must be the next_cursor of a previous answer$"
    ):
        invoke(CATALOG.named("ls"), ctx, {"relative_dir": "flat", "cursor": "not-a-cursor"})
    with pytest.raises(InvalidParameter, match="^parameter 'cursor' must be the next_cursor"):
        # a name-sorted cursor given to an mtime-sorted listing
        invoke(
            CATALOG.named("ls"), ctx, {"relative_dir": "flat", "sort": "mtime", "cursor": data["next_cursor"]}
        )


def test_get_conversation_pages_records_and_entries(ctx: AppContext, wide: Settings) -> None:
    store = ConversationStore(wide.index_dir)
    ids = []
    for n in range(45):
        cid = store.new_id(1_767_225_600 + n)
        store.append(cid, [{"t": "start", "at": 1_767_225_600 + n, "client": "test"}])
        ids.append(cid)
    long = ids[0]
    store.append(
        long, [{"t": "message", "at": 1_767_225_700, "seq": i, "text": "m" * 3_000} for i in range(40)]
    )
    pages = walk(ctx, "get-conversation", {"limit": 20}, "conversations")
    assert [c["id"] for page in pages for c in page] == list(reversed(ids))
    assert [len(p) for p in pages] == [20, 20, 5]
    entries, cursor = [], None
    while True:
        data = call(
            ctx, "get-conversation", {"id": long, "limit": 500, **({"cursor": cursor} if cursor else {})}
        )["data"]
        assert len(dump_json(data["entries"])) <= 20_000
        entries += data["entries"]
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert [e["seq"] for e in entries] == list(range(40))
