"""Conversations across real server processes: a killed server's conversation is closed
by the next start (never one of a live server), a graceful stop closes its own, and the
state dir is private whatever the umask, loosened entries included."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from api.serverkit import VAULT_AGENT

from conversations.kit import RawMcp, cli
from vault_agent.config import Settings

PLAN = "projects/alpha/plan.md"


def _row(settings: Settings, cid: str) -> dict[str, object]:
    code, body, err = cli(settings, "conversations", "show", cid)
    assert code == 0, err
    return body["data"]["conversation"]


def _opened(settings: Settings, text: str) -> tuple[RawMcp, str]:
    mcp = RawMcp(settings, "--no-watch")
    mcp.initialize()
    sent = mcp.call_tool("send_message", {"text": text})
    return mcp, str(sent["structuredContent"]["data"]["conversation_id"])


def test_a_killed_servers_conversation_is_closed_on_the_next_start(settings: Settings) -> None:
    killed, orphan = _opened(settings, "working on it")
    live, running = _opened(settings, "me too")
    try:
        killed.kill()
        assert (_row(settings, orphan)["status"], _row(settings, orphan)["end_reason"]) == ("open", None)
        # The next start (here `serve`) closes the orphan at once, and leaves the live one alone.
        serve = subprocess.Popen(
            [VAULT_AGENT, "serve", "--port", "0", "--vault", str(settings.vault)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=str(settings.vault),
        )
        try:
            assert serve.stdout is not None
            assert serve.stdout.readline().startswith("listening on http://127.0.0.1:")
            row = _row(settings, orphan)
            assert {k: row[k] for k in ("status", "end_reason", "summary_source")} == {
                "status": "ended",
                "end_reason": "server stopped",
                "summary_source": "digest",
            }
            assert (_row(settings, running)["status"], _row(settings, running)["end_reason"]) == (
                "open",
                None,
            )
        finally:
            serve.terminate()
            assert serve.wait(60) == 0
            serve.stdout.close()  # type: ignore[union-attr]
        # The live one ends when its own server stops (the client left: stdin closed).
        live.send_line('{"jsonrpc":"2.0","id":99,"method":"ping"}')
        assert live.next_message()["id"] == 99
    finally:
        assert live.close() == 0
    row = _row(settings, running)
    assert (row["status"], row["end_reason"]) == ("ended", "server stopped")
    assert sorted(os.listdir(Path(settings.index_dir) / "conversations" / "open")) == []


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)


def test_state_dir_is_private_under_umask_022_and_loose_entries_are_narrowed(settings: Settings) -> None:
    state = Path(settings.index_dir)
    # What an older version left: a world-readable record, backup folder and backup.
    loose = state / "conversations"
    loose.mkdir(mode=0o755, exist_ok=True)
    os.chmod(state, 0o755)
    os.chmod(loose, 0o755)
    old_rec = loose / "c20200101T000000000Z-abcdef.rec"
    old_rec.write_bytes(b"")
    os.chmod(old_rec, 0o644)
    (loose / "c20200101T000000000Z-abcdef.old").mkdir(mode=0o755)
    backup = loose / "c20200101T000000000Z-abcdef.old" / ("0" * 64)
    backup.write_bytes(b"old text")
    os.chmod(backup, 0o644)
    note = Path(settings.vault) / PLAN
    os.chmod(note, 0o644)
    mcp = RawMcp(settings, "--no-watch", "--allow-writes", umask=0o022)
    try:
        mcp.initialize()
        wrote = mcp.call_tool("vault_write", {"path": PLAN, "content": "rewritten\n", "mode": "overwrite"})
        assert wrote.get("isError") is not True, wrote
        cid = mcp.call_tool("send_message", {"text": "done"})["structuredContent"]["data"]["conversation_id"]
        conv = state / "conversations"
        entries = {
            "state dir": state,
            "conversations": conv,
            "record": conv / f"{cid}.rec",
            "backups": conv / f"{cid}.old",
            "owners": conv / "owners",
            "open": conv / "open",
            "old record": old_rec,
            "old backups": backup.parent,
            "old backup": backup,
        }
        entries |= {f"backup {p.name[:8]}": p for p in (conv / f"{cid}.old").iterdir()}
        entries |= {f"owner {p.name[:8]}": p for p in (conv / "owners").iterdir()}
        modes = {name: oct(_mode(path)) for name, path in entries.items()}
        assert modes == {name: ("0o700" if entries[name].is_dir() else "0o600") for name in entries}
        assert len([n for n in modes if n.startswith("backup ")]) == 2  # before and after of the write
        assert _mode(note) == 0o644  # the note keeps its own mode: only our copies are narrowed
    finally:
        assert mcp.close() == 0
