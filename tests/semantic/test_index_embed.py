"""`vault-agent index --embed`, end to end: the real CLI, its worker process and the model.

Embeds in the foreground with progress (plain lines when stderr is not a terminal, a bar
when it is), answers the notes it embedded, leaves nothing running; plain `index` on a
terminal offers it in one hint line (never a prompt), and says nothing to a script."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from vault_agent.query.search import SearchRequest, search

from .conftest import REPO, copy_vault, reader_for, settings_for

VAULT_AGENT = str(REPO / ".venv" / "bin" / "vault-agent")


def _run(*args: str, env: dict[str, str] | None = None, tty_stderr: bool = False) -> tuple[int, str, str]:
    """Run the CLI; stderr on a pseudo-terminal when `tty_stderr` (what a person sees)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    if not tty_stderr:
        proc = subprocess.run([VAULT_AGENT, *args], capture_output=True, text=True, env=full_env, timeout=600)
        return proc.returncode, proc.stdout, proc.stderr
    leader, follower = pty.openpty()
    try:
        proc2 = subprocess.Popen([VAULT_AGENT, *args], stdout=subprocess.PIPE, stderr=follower, env=full_env)
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not data:
                break
            chunks.append(data)
        out, _ = proc2.communicate(timeout=600)
    finally:
        os.close(leader)
    return proc2.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


def test_index_embed_embeds_every_note_with_progress_lines(tmp_path: Path) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    code, out, err = _run("index", "--embed", "--json", "--vault", str(settings.vault))
    assert code == 0, err
    data = json.loads(out)["data"]
    assert (data["noteCount"], data["embeddedNotes"]) == (16, 16)
    lines = [ln for ln in err.splitlines() if ln.startswith("embedding: ")]
    assert lines[-1] == "embedding: 16 of 16 notes (100%)"  # plain lines for logs: no bar, no escapes
    assert "\r" not in err and "hint:" not in err
    code, out, err = _run("status", "--verbose", "--json", "--vault", str(settings.vault))
    details = json.loads(out)["data"]["details"]
    assert (details["semanticSearch"], details["embeddedShare"], details["embeddedNotes"]) == (
        "ready",
        1.0,
        16,
    )
    assert details["embedder"] == "none"  # it stopped with the command (worker included)
    assert not (Path(settings.index_dir) / "embedder.json").exists()
    reader = reader_for(settings)
    try:
        answer = search(reader, SearchRequest("how long should I keep tax papers"))
    finally:
        reader.close()
    assert answer.data.mode == "hybrid" and answer.warnings == []


def test_index_embed_draws_a_bar_on_a_terminal(tmp_path: Path) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    code, out, err = _run("index", "--embed", "--vault", str(settings.vault), tty_stderr=True)
    assert code == 0, err
    assert "\rembed [" in err and "16/16 notes" in err
    assert "  embedded  16" in out


def test_plain_index_offers_embed_on_a_terminal_only(tmp_path: Path) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    code, _, err = _run("index", "--vault", str(settings.vault), tty_stderr=True)
    assert code == 0
    hints = [ln.strip() for ln in err.splitlines() if ln.strip().startswith("hint:")]
    assert hints == [
        "hint: 16 of 16 notes have no embeddings for semantic search yet; run 'vault-agent index --embed' "
        "to compute them now, or 'vault-agent serve --watch', 'vault-agent mcp' or 'vault-agent watch' "
        "computes them in the background"
    ]
    code, _, err = _run("index", "--vault", str(settings.vault))  # a script: no hint, nothing waits
    assert code == 0 and "hint:" not in err


def test_index_embed_with_semantic_search_off_is_refused(tmp_path: Path) -> None:
    settings = settings_for(copy_vault(tmp_path / "vault"))
    code, out, _ = _run(
        "index", "--embed", "--json", "--vault", str(settings.vault), env={"VAULT_AGENT_SEMANTIC": "off"}
    )
    assert code == 2
    assert json.loads(out) == {
        "error": {
            "code": "INVALID_PARAMETER",
            "message": "--embed computes embeddings for semantic search, which VAULT_AGENT_SEMANTIC turns off",
        }
    }
