"""Issue 8 item 12: config.toml edited while a server runs, then `reindex`: the running
server must say exactly what fixes it (restart), not "run reindex" again, which cannot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import load_settings
from vault_agent.errors import IndexIncompatible
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader


def _ctx(vault: Path) -> AppContext:
    settings = load_settings({"vault": vault}, env={})  # reads <vault>/.vault-agent/config.toml
    return AppContext(
        settings=settings,
        vault=vault_for_settings(settings),
        reader=SnapshotReader(settings, vault_for_settings(settings)),
    )


def _tree(ctx: AppContext) -> dict[str, Any]:
    op = CATALOG.named("tree")
    return body_of(op, invoke(op, ctx, {}))


def test_server_started_before_a_config_edit_says_to_restart(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for rel in ("notes/a.md", "Archive/old.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text("# note\n")
    build_index(load_settings({"vault": vault}, env={}))
    running = _ctx(vault)
    try:
        assert _tree(running)["data"]["root"]["noteCount"] == 2
        (vault / ".vault-agent" / "config.toml").write_text('exclude = ["Archive/"]\n')
        build_index(load_settings({"vault": vault}, env={}), full=True)  # `vault-agent reindex`
        with pytest.raises(IndexIncompatible) as info:
            _tree(running)
        assert "restart it so it reads the file" in info.value.message
        assert "/" + tmp_path.name not in info.value.message
    finally:
        running.reader.close()
    restarted = _ctx(vault)
    try:
        assert _tree(restarted)["data"]["root"]["noteCount"] == 1
    finally:
        restarted.reader.close()
