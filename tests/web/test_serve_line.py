"""`vault-agent serve` prints the page's address and no secret; `vault-agent web` prints (and on
a desktop opens) a one-time sign-in link that works once. Neither the bearer token nor a
sign-in nonce ever reaches the server's stdout, stderr or any file it writes (services log
their streams: systemd's journal, launchd, a process manager)."""

from __future__ import annotations

import http.client
import json
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

from api.serverkit import VAULT_AGENT, build_fixture_vault

BASE_ENV = {"VAULT_AGENT_SEMANTIC": "off", "PATH": "/usr/bin:/bin"}


def _get(port: int, path: str, cookie: str = "") -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        resp = conn.getresponse()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        return resp.status, headers, resp.read().decode("utf-8")
    finally:
        conn.close()


def _web(
    vault: Path, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VAULT_AGENT, "web", "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=home,
        env={**BASE_ENV, "HOME": str(home), **(env or {})},
    )


def _files_holding(root: Path, secrets: list[str], allowed: Path) -> list[str]:
    """Every file under `root` (the vault, its state dir, the server's home and cwd) that
    holds one of `secrets`, but the token file itself."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and path != allowed:
            data = path.read_bytes()
            found += [f"{path.relative_to(root)}" for s in secrets if s.encode() in data]
    return found


def test_serve_prints_no_secret_and_a_web_link_signs_in_once(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.Popen(
        [VAULT_AGENT, "serve", "--vault", str(settings.vault), "--port", "0", "--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=home,
        env={**BASE_ENV, "HOME": str(home), "VAULT_AGENT_LOG_LEVEL": "DEBUG"},
    )
    err_lines: list[str] = []
    drain = threading.Thread(target=lambda: err_lines.extend(proc.stderr or []), daemon=True)
    drain.start()
    links: list[str] = []
    try:
        assert proc.stdout is not None
        listening = proc.stdout.readline().strip()
        port = int(listening.rsplit(":", 1)[1])
        assert listening == f"listening on http://127.0.0.1:{port}"
        assert proc.stdout.readline() == f"web: http://127.0.0.1:{port}/\n"  # the address only
        token = settings.token_file.read_text().strip()
        assert stat.S_IMODE(settings.token_file.stat().st_mode) == 0o600

        # The address alone asks to sign in, and names the command.
        status, _, text = _get(port, "/")
        assert status == 401 and "vault-agent web" in text

        made = _web(settings.vault, home, "--no-open")
        assert made.returncode == 0, made.stderr
        link = made.stdout.strip()
        assert link.startswith(f"http://127.0.0.1:{port}/sign-in?once=") and "\n" not in link
        assert "2 minutes" in made.stderr and token not in made.stdout + made.stderr
        spare = _web(settings.vault, home, "--json", "--no-open")  # a valid link, never used
        assert spare.returncode == 0 and spare.stderr == ""
        spare_link = json.loads(spare.stdout)["data"]["url"]
        links += [link, spare_link]
        assert spare_link != link

        path = link.removeprefix(f"http://127.0.0.1:{port}")
        status, headers, _ = _get(port, path)
        assert (status, headers["location"]) == (303, "/")
        cookie = headers["set-cookie"].split(";", 1)[0]
        assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
        status, _, text = _get(port, "/", cookie)
        assert status == 200 and "Health of the index" in text
        status, headers, text = _get(port, path)  # the same link again
        assert status == 401 and "set-cookie" not in headers
        assert "used already" in text and "vault-agent web" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout is not None
        out = proc.stdout.read()  # the rest of stdout (stderr is the drain thread's)
        proc.wait(60)
        drain.join(30)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == 0 and out == ""
    err = "".join(err_lines)
    nonces = [u.split("once=", 1)[1] for u in links]
    assert [s for s in [token, *nonces] if s in err] == []
    requests = [json.loads(ln) for ln in err_lines if ln.startswith("{")]
    sign_ins = [r for r in requests if r.get("event") == "request" and r["route"].startswith("/sign-in")]
    assert [(r["route"], r["method"], r["status"]) for r in sign_ins] == [
        ("/sign-in/link", "POST", 200),
        ("/sign-in/link", "POST", 200),
        ("/sign-in", "GET", 303),
        ("/sign-in", "GET", 401),
    ]
    assert [ln for ln in err_lines if "once=" in ln or "sign-in?" in ln] == []  # never a query string
    assert _files_holding(tmp_path, nonces, settings.token_file) == []
    assert _files_holding(tmp_path, [token], settings.token_file) == []


def test_web_opens_the_link_on_a_desktop_and_says_what_to_run_without_a_server(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.Popen(
        [VAULT_AGENT, "serve", "--vault", str(settings.vault), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=home,
        env={**BASE_ENV, "HOME": str(home)},
    )
    # A "browser" that records the address it is asked to open: Python's webbrowser runs
    # $BROWSER when a display is there.
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nimport sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    browser.chmod(0o755)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        desktop = {"DISPLAY": ":0", "BROWSER": str(browser)}
        shown = _web(settings.vault, home, env=desktop)
        assert shown.returncode == 0, shown.stderr
        assert opened.read_text() == shown.stdout.strip() and "opened in your browser" in shown.stderr
        status, _, _ = _get(port, opened.read_text().removeprefix(f"http://127.0.0.1:{port}"))
        assert status == 303
        opened.unlink()
        assert _web(settings.vault, home, "--no-open", env=desktop).returncode == 0
        headless = _web(settings.vault, home, env={"BROWSER": str(browser)})  # no display: print only
        assert headless.returncode == 0 and not opened.exists()
        assert "open it in your browser" in headless.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    gone = _web(settings.vault, home, "--no-open")
    assert gone.returncode == 6 and "SERVER_UNAVAILABLE" in gone.stderr and "vault-agent serve" in gone.stderr
