"""Browser-test kit: the system's Chromium driven by Playwright, a real `vault-agent serve`
process (as the `nobody` user when the suite runs as root, so that a chmod 000 note is
really unreadable to it), an agent session held open in a thread, screenshots.

Nothing downloads a browser: Playwright launches `/usr/bin/chromium` (installed by
`ops/install_chromium.sh`); without it the tests skip with one line saying so.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from api.serverkit import FIXTURES, REPO, VAULT_AGENT, copy_fixture

CHROMIUM = os.environ.get("VAULT_AGENT_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]  # Playwright adds a fresh --user-data-dir (a new temporary profile) to every launch
SCREENSHOTS = REPO / "ops" / "out" / "screenshots"  # gitignored: for a reviewer to look at


def chromium_or_skip() -> Any:
    """Playwright's sync API, or a skip saying what is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: run 'bash ops/install_chromium.sh' (as root) for the browser tests"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    return sync_playwright


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _as_nobody() -> dict[str, Any]:
    """Popen arguments that run the server as `nobody` when we are root (else: ourselves)."""
    if os.geteuid() != 0:
        return {}
    pw = pwd.getpwnam("nobody")
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


def _runs_as_nobody(python: str, prelude: str = "") -> bool:
    try:
        return (
            subprocess.run(
                [python, "-c", prelude + "import duckdb, vault_agent"],
                capture_output=True,
                timeout=60,
                cwd="/",
                **_as_nobody(),
            ).returncode
            == 0
        )
    except OSError:
        return False


def vault_agent_command() -> list[str]:
    """How to start `vault-agent` as the server's user. As root that is `nobody`, who may not
    reach this interpreter (a pyenv under /root): then the system's Python of the same
    version runs the same code (this checkout and the environment's packages on its path)."""
    if os.geteuid() != 0:
        return [VAULT_AGENT]
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip(
            "running as root without a 'nobody' user to drop to (a chmod 000 note would stay readable)"
        )
    if (os.stat(REPO).st_mode & 0o005) != 0o005:
        pytest.skip("running as root and 'nobody' cannot read this checkout")
    if _runs_as_nobody(sys.executable):
        return [VAULT_AGENT]
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    paths = [p for p in sys.path if p.endswith("site-packages")] + [str(REPO)]
    prelude = f"import sys; sys.path[:0] = {paths!r}; "
    if not _runs_as_nobody(system, prelude):
        pytest.skip(f"running as root and 'nobody' can run neither {sys.executable} nor {system}")
    return [
        system,
        "-c",
        prelude + "sys.argv[0] = 'vault-agent'; from vault_agent.cli.main import run; run()",
    ]


class Served:
    """`vault-agent serve --watch --allow-writes --port 0` over a copy of a fixture vault."""

    def __init__(self, extra: dict[str, str], unreadable: list[str]) -> None:
        command = vault_agent_command()
        self.base_dir = Path(tempfile.mkdtemp(prefix="va-web-"))
        self.base_dir.chmod(0o755)
        self.vault = copy_fixture("orientation", self.base_dir / "vault", FIXTURES)
        for rel, text in extra.items():
            (self.vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.vault / rel).write_text(text, encoding="utf-8")
        for rel in unreadable:
            (self.vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.vault / rel).write_text("# Locked\n\nnobody may read this\n", encoding="utf-8")
        who = _as_nobody()
        if who:
            for p in [self.base_dir, *self.base_dir.rglob("*")]:
                os.chown(p, who["user"], who["group"], follow_symlinks=False)
        for rel in unreadable:
            (self.vault / rel).chmod(0o000)
        env = {
            **os.environ,
            "HOME": str(self.base_dir),
            "VAULT_AGENT_SEMANTIC": "off",
            "VAULT_AGENT_LOG_LEVEL": "WARNING",
        }
        index = subprocess.run(
            [*command, "index", "--vault", str(self.vault)],
            cwd=self.base_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            **who,
        )
        assert index.returncode == 0, index.stderr[-2000:]
        self.proc = subprocess.Popen(
            [*command, "serve", "--vault", str(self.vault), "--watch", "--allow-writes", "--port", "0"],
            cwd=self.base_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            **who,
        )
        self.env = env
        self.web_url = self._read_web_line()  # the page's address: no secret in it
        self.base = self.web_url.rstrip("/")
        self.port = int(self.base.rsplit(":", 1)[1])
        self.token = (self.vault / ".vault-agent" / "token").read_text().strip()

    def sign_in_link(self) -> str:
        """A one-time sign-in link, from `vault-agent web --no-open` as its owner runs it."""
        made = subprocess.run(
            [VAULT_AGENT, "web", "--no-open", "--vault", str(self.vault)],
            cwd=self.base_dir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert made.returncode == 0, made.stderr[-2000:]
        assert self.token not in made.stdout + made.stderr
        return made.stdout.strip()

    def _read_web_line(self) -> str:
        assert self.proc.stdout is not None
        found: list[str] = []

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                if line.startswith("web: "):
                    found.append(line[5:].strip())
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(120)
        if not found:
            self.stop()
            raise AssertionError("serve did not print its 'web:' line")
        return found[0]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        for p in self.base_dir.rglob("*"):
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        shutil.rmtree(self.base_dir, ignore_errors=True)


class Agent:
    """An agent's MCP session (the real SDK client over /mcp) in its own process
    (`agent_proc.py`); `call` returns a future, so a question can wait while the browser
    answers it. A process, not a thread: the interpreter stays single-threaded beside the
    browser driver (CPython 3.11 before 3.11.8 could corrupt its AST state across threads)."""

    def __init__(self, served: Served) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("agent_proc.py")), served.base, served.token],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._futures: dict[int, Future[dict[str, Any]]] = {}
        self._ready: Future[None] = Future()
        self._next = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ready.result(60)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            answer = json.loads(line)
            if answer.get("ready"):
                self._ready.set_result(None)
            else:
                self._futures.pop(answer["id"]).set_result(answer)
        if not self._ready.done():
            self._ready.set_exception(AssertionError("the agent process ended before its session started"))

    def call(self, tool: str, arguments: dict[str, Any]) -> Future[dict[str, Any]]:
        """Send one tool call; the future holds `{is_error, data}`."""
        assert self.proc.stdin is not None
        self._next += 1
        future: Future[dict[str, Any]] = Future()
        self._futures[self._next] = future
        self.proc.stdin.write(json.dumps({"id": self._next, "tool": tool, "arguments": arguments}) + "\n")
        self.proc.stdin.flush()
        return future

    def data(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = self.call(tool, arguments).result(120)
        assert not answer["is_error"], answer
        return answer["data"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
        self._reader.join(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def agent(served: Served) -> Iterator[Agent]:
    one = Agent(served)
    try:
        yield one
    finally:
        one.close()
