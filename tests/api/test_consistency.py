"""Snapshot consistency over HTTP: while a reindex commits, concurrent answers are each
entirely the old snapshot's or entirely the new one's (counts never mix)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from api.serverkit import REPO, ServerThread, make_context
from vault_agent.config import Settings, load_settings
from vault_agent.indexer.build import build_index
from vault_agent.server.context import close_context

ROUTES = ("/overview", "/tags?limit=200")


def _generated_vault(tmp_path: Path, notes: int) -> Settings:
    vault = tmp_path / "gen"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "ops" / "gen_vault.py"),
            str(vault),
            "--notes",
            str(notes),
            "--seed",
            "3",
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    settings = load_settings({"vault": vault}, env={})
    build_index(settings, full=True)
    return settings


def _add_batch(vault: Path, count: int) -> None:
    folder = vault / "zz-batch"
    folder.mkdir()
    for i in range(count):
        (folder / f"n{i:04d}.md").write_text(
            f"---\ntags: [batch-tag]\ntype: batch\n---\n# N {i}\n", encoding="utf-8"
        )


async def _hammer(url: str, token: str, done: threading.Event, minimum: int) -> list[tuple[str, Any]]:
    answers: list[tuple[str, Any]] = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:

        async def one(route: str) -> None:
            async with session.get(url + route) as resp:
                answers.append((route, (resp.status, (await resp.json())["data"])))

        while not done.is_set() or len(answers) < minimum:
            await asyncio.gather(*(one(ROUTES[i % 2]) for i in range(50)))
    return answers


async def _snapshot_answers(url: str, token: str) -> dict[str, Any]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
        out = {}
        for route in ROUTES:
            async with session.get(url + route) as resp:
                out[route] = (resp.status, (await resp.json())["data"])
        return out


def _check(tmp_path: Path, notes: int, batch: int) -> None:
    settings = _generated_vault(tmp_path, notes)
    ctx = make_context(settings)  # freshness pinned: answers depend on the snapshot only
    server = ServerThread(ctx).start()
    try:
        before = asyncio.run(_snapshot_answers(server.url, server.token))
        _add_batch(settings.vault, batch)
        done = threading.Event()

        def reindex() -> None:
            try:
                build_index(settings, full=True)
            finally:
                done.set()

        worker = threading.Thread(target=reindex)
        worker.start()
        try:
            answers = asyncio.run(_hammer(server.url, server.token, done, 200))
        finally:
            worker.join(600)
        after = asyncio.run(_snapshot_answers(server.url, server.token))
    finally:
        server.stop()
        close_context(ctx)
    assert before != after
    assert after["/overview"][1]["noteCount"] == before["/overview"][1]["noteCount"] + batch
    mixed = [(route, body) for route, body in answers if body not in (before[route], after[route])]
    assert len(answers) >= 200
    assert mixed == []


def test_answers_during_a_reindex_come_from_one_snapshot(tmp_path: Path) -> None:
    _check(tmp_path, notes=400, batch=50)


@pytest.mark.slow
def test_answers_during_a_reindex_of_20k_notes_come_from_one_snapshot(tmp_path: Path) -> None:
    _check(tmp_path, notes=20000, batch=500)
