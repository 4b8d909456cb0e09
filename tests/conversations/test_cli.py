"""The terminal side: `messages --follow` reads the live stream, `messages` the records,
`conversations export` writes a Markdown note."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

from api.serverkit import VAULT_AGENT, ServerThread
from testkit import wait_until

from conversations.kit import cli
from vault_agent.config import Settings


def test_messages_follow_prints_each_message_as_it_comes(server: ServerThread, settings: Settings) -> None:
    proc = subprocess.Popen(
        [
            VAULT_AGENT,
            "messages",
            "--follow",
            "--json",
            "--vault",
            str(settings.vault),
            "--server",
            server.url,
            "--token",
            server.token,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout
    assert stdout is not None

    def pump() -> None:
        for ln in stdout:
            lines.put(ln)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        server.request("POST", "/messages", body=b'{"text": "warm up"}')  # builds the hub
        hub = server.ctx.hub
        assert hub is not None
        wait_until(lambda: len(hub._listeners) == 1, what="the terminal to subscribe")
        for text in ("first", "second"):
            status, _, _ = server.request("POST", "/messages", body=json.dumps({"text": text}).encode())
            assert status == 200
        got = [json.loads(lines.get(timeout=30)) for _ in range(2)]
    finally:
        proc.kill()
        proc.wait(30)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert [(e["type"], e["text"], e["client"]) for e in got] == [
        ("message", "first", "http"),
        ("message", "second", "http"),
    ]
    # Recent messages from the records (no server needed), oldest first.
    proc2 = subprocess.run(
        [VAULT_AGENT, "messages", "--limit", "2", "--vault", str(settings.vault)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc2.returncode == 0 and [ln.split("  ", 1)[1] for ln in proc2.stdout.splitlines()] == [
        "first",
        "second",
    ]


def test_messages_follow_without_server_exits_6(settings: Settings) -> None:
    code, body, _ = cli(settings, "messages", "--follow", "--server", "http://127.0.0.1:9")
    assert (code, body["error"]["code"]) == (6, "SERVER_UNAVAILABLE")


def test_export_writes_a_markdown_note_once(server: ServerThread, settings: Settings, tmp_path: Path) -> None:
    status, _, text = server.request("POST", "/messages", body=b'{"text": "exported words"}')
    cid = json.loads(text)["data"]["conversation_id"]
    server.request("POST", "/conversations/end", body=b'{"title": "Export me", "summary": "One message."}')
    folder = tmp_path / "out"
    code, body, _ = cli(settings, "conversations", "export", cid, "--to", str(folder))
    assert (code, body["data"]) == (0, {"conversation_id": cid, "written_file": f"{cid}.md"})
    note = (folder / f"{cid}.md").read_text(encoding="utf-8")
    assert note.splitlines()[:3] == ["---", f"conversation_id: {cid}", "client: 'http'"]
    assert "# Export me" in note and "One message." in note and "**agent**: exported words" in note
    code, body, _ = cli(settings, "conversations", "export", cid, "--to", str(folder))
    assert (code, body["error"]["code"]) == (8, "CONFLICT")
    assert str(tmp_path) not in body["error"]["message"]
