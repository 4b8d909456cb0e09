"""`vault-agent serve --port 0` prints the page's address after its listening line, with the
real port and the token that signs a browser in."""

from __future__ import annotations

import http.client
import signal
import subprocess
from pathlib import Path

from api.serverkit import VAULT_AGENT, build_fixture_vault


def test_serve_prints_the_web_address(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    proc = subprocess.Popen(
        [VAULT_AGENT, "serve", "--vault", str(settings.vault), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={"VAULT_AGENT_SEMANTIC": "off", "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None
        listening = proc.stdout.readline().strip()
        web = proc.stdout.readline().strip()
        port = int(listening.rsplit(":", 1)[1])
        token = settings.token_file.read_text().strip()
        assert web == f"web: http://127.0.0.1:{port}/?token={token}"
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", web.removeprefix(f"web: http://127.0.0.1:{port}"))
        resp = conn.getresponse()
        assert (resp.status, resp.getheader("Location")) == (303, "/")
        assert "HttpOnly" in (resp.getheader("Set-Cookie") or "")
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        if proc.stdout is not None:
            proc.stdout.close()
