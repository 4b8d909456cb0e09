"""The vault folder vanishing and returning under a real `serve --watch` (issue 20, item 5).

A sync tool, a git checkout or a restored backup removes the folder and puts it back, or
puts another folder in its place. Reads answer VAULT_UNAVAILABLE (never 500), status says
`stale` with the reason and keeps the last snapshot's counts (never a fresh empty one), the
watcher re-attaches when the folder is back, and `fresh` comes only after the rescan.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from api.processkit import ServeChild, write_notes
from api.serverkit import VAULT_AGENT
from testkit import wait_until

MISSING = (
    "index is stale: vault folder missing (moved, deleted or not mounted); answers come from the "
    "last snapshot, and indexing resumes by itself when the folder is back"
)


def _status(serve: ServeChild, token: str) -> tuple[int, dict[str, Any]]:
    return serve.get("/status", token)


def _fresh_with(serve: ServeChild, token: str, notes: int) -> bool:
    code, body = _status(serve, token)
    return code == 200 and body["data"]["indexFreshness"] == "fresh" and body["data"]["noteCount"] == notes


def _cli_status(vault: Path, index_dir: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    proc = subprocess.run(
        [VAULT_AGENT, "status", "--verbose", "--json", "--vault", str(vault), "--index-dir", str(index_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.mark.slow
def test_vault_folder_removed_then_restored(tmp_path: Path) -> None:
    vault, state, backup = tmp_path / "vault", tmp_path / "state", tmp_path / "backup"
    write_notes(vault, 30)
    serve = ServeChild("--watch", "--vault", str(vault), "--index-dir", str(state))
    try:
        token = (state / "token").read_text().strip()
        wait_until(lambda: _fresh_with(serve, token, 30), 120, "the first index")
        shutil.copytree(vault, backup)
        shutil.rmtree(vault)
        wait_until(lambda: _status(serve, token)[1]["data"]["indexFreshness"] == "stale", 30, "stale")
        code, body = _status(serve, token)
        assert (code, body["data"]["noteCount"], body["warnings"]) == (
            200,
            30,
            [{"code": "INDEX_STALE", "message": MISSING}],
        )
        code, body = serve.get("/read?path=notes/n00001.md&full=true", token)
        assert (code, body["error"]["code"]) == (503, "VAULT_UNAVAILABLE")
        code, body = serve.get("/search?q=topic", token)
        assert code == 200 and body["data"]["results"] and body["data"]["indexFreshness"] == "stale"
        cli = _cli_status(vault, state)  # the CLI, reading writer.json, agrees with the server
        assert (cli["data"]["indexFreshness"], cli["data"]["details"]["staleReason"]) == (
            "stale",
            "vault-missing",
        )
        write_notes(backup, 1, start=30)  # changed while away
        shutil.copytree(backup, vault)  # a new folder (another inode) at the same path
        wait_until(lambda: _fresh_with(serve, token, 31), 60, "fresh after the rescan")
        write_notes(vault, 1, start=31)  # the watcher sees the restored folder
        wait_until(lambda: _fresh_with(serve, token, 32), 30, "a note added after the return")
    finally:
        serve.stop()
    events = [ln.get("event") for ln in serve.logs()]
    assert events.count("vault_missing") == 1 and "watch_reattached" in events
    assert not [ln for ln in serve.logs() if ln["level"] == "ERROR" or "exc" in ln]


@pytest.mark.slow
def test_vault_folder_renamed_away_and_back_with_the_state_dir_inside(tmp_path: Path) -> None:
    vault, away = tmp_path / "vault", tmp_path / "vault.away"
    write_notes(vault, 20)
    serve = ServeChild("--watch", "--vault", str(vault))
    try:
        token = (vault / ".vault-agent" / "token").read_text().strip()
        wait_until(lambda: _fresh_with(serve, token, 20), 120, "the first index")
        vault.rename(away)
        wait_until(lambda: bool(serve.events("vault_missing")), 30, "the writer noticing")
        for _ in range(5):  # the index went with the folder: a named error, never a 500
            code, body = _status(serve, token)
            assert (code, body["error"]["code"]) == (503, "VAULT_UNAVAILABLE")
        assert not vault.exists()  # nothing (state dir, token, log) brought back an empty folder
        (away / "notes" / "n00003.md").write_text("# Note 3\n\nedited while away: walrus\n")
        write_notes(away, 1, start=20)
        away.rename(vault)
        wait_until(lambda: _fresh_with(serve, token, 21), 60, "fresh after the rescan")
        code, body = serve.get("/search?q=walrus", token)
        assert [r["path"] for r in body["data"]["results"]] == ["notes/n00003.md"]
    finally:
        serve.stop()
    assert not serve.events("state_dir_recreated")  # the lock file came back with the folder


@pytest.mark.slow
def test_vault_folder_replaced_by_another_folder(tmp_path: Path) -> None:
    vault, old, state = tmp_path / "vault", tmp_path / "vault.old", tmp_path / "state"
    write_notes(vault, 10)
    serve = ServeChild("--watch", "--vault", str(vault), "--index-dir", str(state))
    try:
        token = (state / "token").read_text().strip()
        wait_until(lambda: _fresh_with(serve, token, 10), 120, "the first index")
        vault.rename(old)
        vault.mkdir()
        write_notes(vault, 2, start=100, folder="other")
        wait_until(lambda: _fresh_with(serve, token, 2), 60, "the new folder indexed")
        # The renamed-away folder is not watched any more: its edits never reach the index.
        (old / "notes" / "n00001.md").write_text("# Note 1\n\nedited in the old folder: narwhal\n")
        write_notes(vault, 1, start=102, folder="other")
        wait_until(lambda: _fresh_with(serve, token, 3), 30, "a note added to the new folder")
        assert serve.get("/search?q=narwhal", token)[1]["data"]["results"] == []
    finally:
        serve.stop()
    assert [ln["msg"] for ln in serve.events("watch_reattached")] == [
        "watching the vault again (vault folder replaced)"
    ]
