"""`vault-agent index | reindex | status | watch` as a user runs them (real subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from engine_support import PY, make_settings, note_text, write
from testkit import wait_until

from vault_agent.freshness import read_writer_state
from vault_agent.indexer.lock import WriterLock


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    full_env.update(env or {})
    return subprocess.run(
        [PY, "-c", "from vault_agent.cli.main import run; run()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=full_env,
    )


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    for i in range(6):
        write(vault, f"d{i % 2}/n{i}.md", note_text(i))
    write(vault, "broken.md", "---\n: [\n---\n# B\n")
    return vault


def test_status_without_snapshot_exits_4(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    res = _run("status", "--json", "--vault", str(vault))
    assert res.returncode == 4
    body = json.loads(res.stdout)
    assert body["error"]["code"] == "INDEX_NOT_FOUND"
    assert str(tmp_path) not in res.stdout + res.stderr


def test_index_status_reindex(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    res = _run("index", "--json", "--vault", str(vault))
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)["data"]
    assert (data["snapshotId"], data["noteCount"], data["invalidFrontmatterCount"]) == (1, 7, 1)
    assert res.stderr == ""  # no progress bar when stderr is not a TTY
    res = _run("status", "--json", "--vault", str(vault))
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    assert body["warnings"] == []
    assert set(body["data"]) == {
        "indexFreshness",
        "snapshotId",
        "noteCount",
        "chunkCount",
        "invalidFrontmatterCount",
        "lastCommitAt",
        "schemaVersion",
    }
    assert (body["data"]["indexFreshness"], body["data"]["noteCount"]) == ("fresh", 7)
    write(vault, "d0/n0.md", note_text(0, "changed"))
    res = _run("status", "--json", "--vault", str(vault))
    assert json.loads(res.stdout)["data"]["indexFreshness"] == "stale"
    assert json.loads(res.stdout)["warnings"][0]["code"] == "INDEX_STALE"
    res = _run("reindex", "--vault", str(vault))
    assert res.returncode == 0 and "reindexed snapshot 2" in res.stdout
    res = _run("status", "--vault", str(vault))
    assert res.returncode == 0
    assert res.stdout.splitlines()[0].split() == ["freshness", "fresh"]


def test_second_writer_exits_5(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault)
    with WriterLock(s.index_dir):
        for cmd in ("index", "reindex", "watch"):
            res = _run(cmd, "--json", "--vault", str(vault))
            assert res.returncode == 5, (cmd, res.stderr)
            err = json.loads(res.stdout)["error"]
            assert err["code"] == "INDEX_BUSY"
            assert str(tmp_path) not in err["message"] and "pid" not in err["message"].lower()


def test_watch_runs_until_sigterm(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    s = make_settings(vault)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    env["VAULT_AGENT_VAULT"] = str(vault)
    proc = subprocess.Popen(
        [PY, "-c", "from vault_agent.cli.main import run; run()", "watch"],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        wait_until(lambda: read_writer_state(s.index_dir) is not None, 60, "the watcher to start")
        busy = _run("index", "--vault", str(vault))
        assert busy.returncode == 5 and "INDEX_BUSY" in busy.stderr
        res = _run("status", "--json", "--vault", str(vault))
        assert json.loads(res.stdout)["data"]["indexFreshness"] in ("fresh", "pending", "updating")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert read_writer_state(s.index_dir) is None


def test_help_has_examples() -> None:
    for cmd in ("index", "reindex", "watch", "status"):
        res = _run(cmd, "--help")
        assert res.returncode == 0 and "Example: vault-agent" in res.stdout, cmd
        for opt in ("--vault", "--index-dir", "--config", "--json"):
            assert opt in res.stdout


def test_index_in_a_folder_without_notes_says_so(tmp_path: Path) -> None:
    """Issue 8 item 13: a hint naming the folder, never an absolute path in JSON."""
    empty = tmp_path / "Downloads"
    (empty / "pics").mkdir(parents=True)
    (empty / "pics" / "a.png").write_bytes(b"\x89PNG")
    res = subprocess.run(
        [PY, "-c", "from vault_agent.cli.main import run; run()", "index"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=empty,
        env={k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")},
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr == (
        "warning [NO_NOTES]: 0 notes found in the current folder (Downloads); pass --vault with the "
        "folder that holds your notes (files ending .md)\n"
    )
    res = _run("index", "--vault", str(empty))  # the human line may echo what was typed
    assert f"0 notes found in {empty};" in res.stderr
    res = _run("index", "--json", "--vault", str(empty))
    body = json.loads(res.stdout)
    assert body["data"]["noteCount"] == 0
    assert body["warnings"] == [
        {
            "code": "NO_NOTES",
            "message": "0 notes found in Downloads; pass --vault with the folder that holds your notes "
            "(files ending .md)",
        }
    ]
    assert str(tmp_path) not in res.stdout + res.stderr


def test_index_vault_that_is_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    """Issue 8 item 14."""
    note = tmp_path / "note.md"
    note.write_text("# A note\n")
    res = _run("index", "--json", "--vault", str(note))
    assert res.returncode == 2
    assert json.loads(res.stdout)["error"] == {
        "code": "INVALID_PATH",
        "message": "--vault names a file, not a folder; pass the folder that holds your notes "
        "(for a single note, its parent folder)",
    }
    assert not (tmp_path / ".vault-agent").exists()
