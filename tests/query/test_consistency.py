"""Snapshot consistency: concurrent orientation calls during a real reindex never mix snapshots."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]
CALLS = 200


def _gen(out: Path, notes: int) -> None:
    subprocess.run(
        [sys.executable, str(REPO / "ops" / "gen_vault.py"), str(out), "--notes", str(notes), "--seed", "1"],
        check=True,
        capture_output=True,
        timeout=600,
    )


def _bodies(ctx: AppContext) -> dict[str, Any]:
    return {
        name: body_of(CATALOG.named(name), invoke(CATALOG.named(name), ctx, {}))
        for name in ("overview", "tags")
    }


def _change(vault: Path) -> None:
    """Add a folder of notes with a new tag and remove a few: every count moves."""
    extra = vault / "zz-added"
    extra.mkdir()
    for i in range(150):
        (extra / f"added-{i:03d}.md").write_text(
            f"---\ntags: [added, batch{i % 3}]\ntype: added\n---\n# A{i}\n"
        )
    removed = sorted(vault.rglob("*.md"))[:40]
    for path in removed:
        if "zz-added" not in str(path):
            path.unlink()


def _run(tmp_path: Path, notes: int) -> None:
    vault = tmp_path / "vault"
    _gen(vault, notes)
    settings = Settings(vault=vault, index_dir=tmp_path / "state")
    build_index(settings, full=True)
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    ctx = AppContext(settings=settings, vault=vault_for_settings(settings), reader=reader)
    try:
        before = _bodies(ctx)
        _change(vault)
        done = threading.Event()
        failure: list[BaseException] = []

        def reindex() -> None:
            try:
                build_index(settings, full=True)
            except BaseException as exc:  # reported by the main thread
                failure.append(exc)
            finally:
                done.set()

        def call(i: int) -> tuple[str, dict[str, Any]]:
            name = "overview" if i % 2 == 0 else "tags"
            return name, body_of(CATALOG.named(name), invoke(CATALOG.named(name), ctx, {}))

        builder = threading.Thread(target=reindex, name="reindex")
        results: list[tuple[str, dict[str, Any]]] = []
        with ThreadPoolExecutor(8) as pool:
            builder.start()
            i = 0
            # Keep calling while the reindex runs, and at least CALLS times in all.
            while not done.is_set() or i < CALLS:
                batch = [pool.submit(call, i + k) for k in range(16)]
                results.extend(f.result() for f in batch)
                i += 16
            builder.join(timeout=600)
        assert not failure and not builder.is_alive()
        after = _bodies(ctx)
        assert after != before
        assert before["overview"]["data"]["noteCount"] != after["overview"]["data"]["noteCount"]
        for name, body in results:
            assert body in (before[name], after[name]), f"{name} mixed snapshots"
        assert len(results) >= CALLS
    finally:
        reader.close()
        shutil.rmtree(vault, ignore_errors=True)


def test_consistency_during_reindex_2k(tmp_path: Path) -> None:
    _run(tmp_path, 2000)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_consistency_during_reindex_20k(tmp_path: Path) -> None:
    _run(tmp_path, 20000)
