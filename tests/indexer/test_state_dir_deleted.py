"""The state dir deleted under a real `serve --watch` (issue 20, item 6).

The server re-takes its writer lock at once, writes its token file again (same token) and
rebuilds the index; `vault-agent index` started beside it meanwhile exits 5 (INDEX_BUSY),
and answers say what is happening instead of "run vault-agent index".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from api.processkit import ServeChild, write_notes
from api.serverkit import VAULT_AGENT
from testkit import wait_until

from vault_agent.config import load_settings
from vault_agent.contracts import WRITER_STATE_FILE, WriterState
from vault_agent.errors import IndexBusy
from vault_agent.freshness import missing_index_error
from vault_agent.indexer.lock import WriterLock, writer_lock_held

REBUILDING = "the index folder was deleted; the running server is rebuilding the index; retry in a moment"


def _index(vault: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    return subprocess.run(
        [VAULT_AGENT, "index", "--json", "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.slow
def test_state_dir_deleted_under_serve_watch(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    state = vault / ".vault-agent"
    write_notes(vault, 200)
    serve = ServeChild("--watch", "--vault", str(vault))
    answers: list[tuple[int, Any]] = []
    try:
        token = (state / "token").read_text().strip()

        def fresh(notes: int) -> bool:
            code, body = serve.get("/status", token)
            answers.append((code, body))
            return (
                code == 200
                and body["data"]["indexFreshness"] == "fresh"
                and body["data"]["noteCount"] == notes
            )

        wait_until(lambda: fresh(200), 120, "the first index")
        answers.clear()
        shutil.rmtree(state)
        beside = _index(vault)  # at once: before the server has even noticed
        assert (beside.returncode, json.loads(beside.stdout)["error"]["code"]) == (5, "INDEX_BUSY")
        write_notes(vault, 5, start=200)
        wait_until(lambda: fresh(205), 120, "the rebuilt index")
        assert (state / "token").read_text().strip() == token  # same token: clients keep working
        assert writer_lock_held(state)
        again = _index(vault)
        assert (again.returncode, json.loads(again.stdout)["error"]["code"]) == (5, "INDEX_BUSY")
    finally:
        serve.stop()
    # Meanwhile every answer was the old state, a rebuild in progress, or the new state:
    # never "run vault-agent index" (which would only answer INDEX_BUSY).
    for code, body in answers:
        if code != 200:
            assert (code, body["error"]) == (409, {"code": "INDEX_NOT_FOUND", "message": REBUILDING})
    assert [ln.get("event") for ln in serve.logs() if ln["level"] == "WARNING"].count(
        "state_dir_recreated"
    ) == 1
    assert not [ln for ln in serve.logs() if ln["level"] == "ERROR" or "exc" in ln]


def test_a_deleted_lock_file_is_noticed_and_taken_again(tmp_path: Path) -> None:
    state = tmp_path / "state"
    lock = WriterLock(state)
    lock.acquire()
    try:
        assert lock.intact()
        shutil.rmtree(state)
        assert not lock.intact()
        other = WriterLock(state)
        with pytest.raises(IndexBusy):  # the abstract name outlives the folder (Linux)
            other.acquire()
        lock.retake()
        assert lock.intact() and writer_lock_held(state)
    finally:
        lock.release()
    assert not writer_lock_held(state)


def test_index_not_found_says_a_rebuild_is_running(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    settings = load_settings({"vault": vault}, env={})
    settings.index_dir.mkdir()
    state = WriterState(
        pid=os.getpid(),
        started_at="2026-01-01T00:00:00Z",
        heartbeat_at=time.time(),
        phase="building",
        log_head_seq=0,
        applied_seq=0,
        snapshot_id=None,
        watcher_ok=True,
        watching=True,
        stale_reason="index-folder-deleted",
    )
    (settings.index_dir / WRITER_STATE_FILE).write_text(state.model_dump_json())
    assert missing_index_error(settings).to_body() == {
        "error": {"code": "INDEX_NOT_FOUND", "message": REBUILDING}
    }
    (settings.index_dir / WRITER_STATE_FILE).write_text(
        state.model_copy(update={"stale_reason": None}).model_dump_json()
    )
    assert missing_index_error(settings).message == (
        "no index snapshot exists yet; the running server is building the first one; retry in a moment"
    )
    (settings.index_dir / WRITER_STATE_FILE).unlink()
    assert missing_index_error(settings).message == "no index snapshot exists yet; run 'vault-agent index'"
