#!/usr/bin/env python3
"""The web page's budgets (issue 24), measured against real `vault-agent serve` processes.

    python ops/gen_vault.py /tmp/v100k --notes 100000 --seed 1
    python ops/gen_vault.py /tmp/v10k --notes 10000 --seed 1
    nice python ops/bench/bench_web.py --health-vault /tmp/v100k --search-vault /tmp/v10k [--runs 7]

Builds an index when a vault has none; starts `vault-agent serve --port 0` (no watcher,
`VAULT_AGENT_SEMANTIC=off`) per vault, signs in with a link from `vault-agent web --no-open`, then:
- page weight: each view's HTML (health of an empty-of-problems vault, search without a
  query, conversations, the vault's largest note rendered as the page first shows it) plus
  the script, style sheet and icon it loads; budget 100 KB;
- first paint of the health view at the health vault: Chromium's own
  `first-contentful-paint` and the navigation's `responseStart` (time to first byte),
  through the system's Chromium (Playwright), median of `--runs` page loads; without a
  Chromium, the server's time to first byte only (said so in the output); budget 300 ms;
- search as you type at the search vault: each prefix of a few words, as the page's
  debounced requests send them (`/ui/search?q=…&part=results`), p50 and p99; the API's
  `/search` for the same prefixes side by side (the page's cost over the operation);
  budget p50 100 ms;
- the writer: `vault-agent index` (which takes the writer lock) run while the page's live
  stream is open and views are being fetched: it must succeed.
Prints the load average with the figures, a table and one JSON line (with `uptime`).

--smoke: one generated vault of 20 notes for both, one page load (still through Chromium
when the system has one: ops/install_chromium.sh).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import benchkit
from bench_http import ensure_index, pct

VAULT_AGENT = benchkit.CLI
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WORDS = ["lighthouse", "budget forecast", "meeting agenda", "migration plan", "議事録"]
# Resolves with the first contentful paint's time (a promise, not a polled string: the page's
# CSP forbids eval, which Playwright's wait_for_function(string) needs).
FCP_JS = """new Promise(resolve => new PerformanceObserver(list => {
  const fcp = list.getEntries().find(e => e.name === 'first-contentful-paint');
  if (fcp) resolve(fcp.startTime);
}).observe({type: 'paint', buffered: true}))"""
ASSET_RE = re.compile(r'(?:src|href)="(/ui/static/[^"]+)"')


class Server:
    def __init__(self, vault: Path) -> None:
        env = {**os.environ, "VAULT_AGENT_SEMANTIC": "off", "VAULT_AGENT_LOG_LEVEL": "WARNING"}
        self.proc = subprocess.Popen(
            [VAULT_AGENT, "serve", "--vault", str(vault), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("web: "):
                self.base = line[5:].strip().rstrip("/")
                break
        self.vault = vault
        self.port = int(self.base.rsplit(":", 1)[1])
        self.token = (vault / ".vault-agent" / "token").read_text().strip()
        first = self.get(self.sign_in_link(), cookie=False)
        self.cookie = first[2]["set-cookie"].split(";", 1)[0]

    def sign_in_link(self) -> str:
        """A one-time sign-in link's path, from `vault-agent web` as a person runs it."""
        made = subprocess.run(
            [VAULT_AGENT, "web", "--no-open", "--vault", str(self.vault)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return made.stdout.strip().removeprefix(self.base)

    def get(self, path: str, cookie: bool = True, bearer: bool = False) -> tuple[int, bytes, dict[str, str]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        headers = {"Cookie": self.cookie} if cookie else {}
        if bearer:
            headers = {"Authorization": f"Bearer {self.token}"}
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()

    def timed(self, path: str, **kw: Any) -> float:
        start = time.perf_counter()
        status, _body, _h = self.get(path, **kw)
        assert status == 200, (path, status)
        return (time.perf_counter() - start) * 1000

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def page_weight(server: Server) -> dict[str, int]:
    """Bytes of each view: its HTML plus the assets it loads (each once); `note` is the
    vault's largest note (by characters) as the page first shows it, rendered."""
    _s, body, _h = server.get("/query?sort=-size&limit=1", cookie=False, bearer=True)
    notes = json.loads(body)["data"]["results"]
    views = [("health", "/"), ("search", "/ui/search"), ("conversations", "/ui/conversations")]
    if notes:
        views.append(("note", "/ui/note?path=" + quote(notes[0]["path"])))
    out: dict[str, int] = {}
    for name, path in views:
        status, html, _h = server.get(path)
        assert status == 200, (path, status)
        assets = sum(
            len(server.get(a, cookie=False)[1]) for a in sorted(set(ASSET_RE.findall(html.decode())))
        )
        out[name] = len(html) + assets
    return out


def first_paint(server: Server, runs: int) -> dict[str, Any]:
    ttfb_server = [server.timed("/") for _ in range(runs)]
    out: dict[str, Any] = {"server_ttfb_ms_p50": statistics.median(ttfb_server)}
    if not os.access(CHROMIUM, os.X_OK):
        out["chromium"] = "absent: server time to first byte only"
        return out
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_context().new_page()
        page.goto(server.base + server.sign_in_link())
        fcp, ttfb = [], []
        for _ in range(runs):
            page.goto(server.base + "/")
            fcp.append(page.evaluate(FCP_JS))
            ttfb.append(page.evaluate("performance.getEntriesByType('navigation')[0].responseStart"))
        browser.close()
    out.update(
        {
            "chromium_fcp_ms_p50": statistics.median(fcp),
            "chromium_ttfb_ms_p50": statistics.median(ttfb),
            "chromium_fcp_ms_max": max(fcp),
        }
    )
    return out


def search_as_you_type(server: Server, runs: int) -> dict[str, float]:
    prefixes = [w[:n] for w in WORDS for n in range(2, len(w) + 1)]
    for p in prefixes[:10]:  # warm-up
        server.timed(f"/ui/search?q={quote(p)}&part=results")
    page_ms, api_ms = [], []
    for _ in range(runs):
        for p in prefixes:
            page_ms.append(server.timed(f"/ui/search?q={quote(p)}&part=results&limit=20"))
            api_ms.append(server.timed(f"/search?q={quote(p)}&limit=20", cookie=False, bearer=True))
    return {
        "page_p50_ms": statistics.median(page_ms),
        "page_p99_ms": pct(page_ms, 0.99),
        "api_p50_ms": statistics.median(api_ms),
        "requests": len(page_ms),
    }


def writer_free(server: Server, vault: Path) -> dict[str, Any]:
    """`vault-agent index` (the writer lock) while the live stream is open and views load."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    conn.request("GET", "/ui/events", headers={"Cookie": server.cookie})
    stream = conn.getresponse()
    seen: list[str] = []

    def read() -> None:
        try:
            seen.extend(iter(lambda: stream.readline().decode(), ""))
        except (OSError, ValueError, AttributeError):
            return  # the connection was closed under the reader

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stop = threading.Event()

    def browse() -> None:
        while not stop.is_set():
            for path in ("/", "/ui/search?q=plan&part=results", "/ui/conversations"):
                server.get(path)

    browsing = threading.Thread(target=browse, daemon=True)
    browsing.start()
    start = time.perf_counter()
    index = subprocess.run(
        [VAULT_AGENT, "index", "--vault", str(vault)],
        capture_output=True,
        text=True,
        env={**os.environ, "VAULT_AGENT_SEMANTIC": "off"},
        timeout=600,
    )
    took = time.perf_counter() - start
    stop.set()
    browsing.join(60)
    conn.close()
    return {"index_exit": index.returncode, "index_s": round(took, 2), "stream_lines": len(seen)}


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument(
        "--health-vault",
        type=Path,
        help="a vault with no problems, e.g. 100k notes (required unless --smoke)",
    )
    ap.add_argument(
        "--search-vault", type=Path, help="the vault typed against, e.g. 10k notes (required unless --smoke)"
    )
    ap.add_argument("--runs", type=int, default=7)
    args = benchkit.parse(ap, smoke={"runs": 1})
    with benchkit.workdir("bench-web") as work:
        benchkit.inputs_or_smoke(ap, args, work, "health_vault", indexed=False)
        if args.smoke:
            args.search_vault = args.health_vault
        elif args.search_vault is None:
            ap.error("required (or --smoke): search_vault")
        _measure(args)


def _measure(args: argparse.Namespace) -> None:
    for vault in (args.health_vault, args.search_vault):
        built = ensure_index(vault)
        if built is not None:
            print(f"built the index of {vault.name} in {built:.0f} s", flush=True)
    result: dict[str, Any] = {"load_before": benchkit.load_line()}
    server = Server(args.health_vault)
    try:
        result["page_weight_bytes"] = page_weight(server)
        result["health_first_paint"] = first_paint(server, args.runs)
    finally:
        server.stop()
    server = Server(args.search_vault)
    try:
        result["search_as_you_type"] = search_as_you_type(server, max(1, args.runs // 3))
        result["writer"] = writer_free(server, args.search_vault)
    finally:
        server.stop()
    print(f"load before: {result['load_before']}")
    for name, size in result["page_weight_bytes"].items():
        print(f"page weight {name:<14} {size / 1024:6.1f} KB (budget 100 KB)")
    for key, value in result["health_first_paint"].items():
        print(f"health first paint {key:<22} {value if isinstance(value, str) else f'{value:.1f}'}")
    sat = result["search_as_you_type"]
    print(
        f"search as you type: page p50 {sat['page_p50_ms']:.1f} ms, p99 {sat['page_p99_ms']:.1f} ms, "
        f"API p50 {sat['api_p50_ms']:.1f} ms ({sat['requests']} requests; budget p50 100 ms)"
    )
    print(
        f"writer: index beside the open page exit {result['writer']['index_exit']} in {result['writer']['index_s']} s"
    )
    benchkit.report(result)  # with the load after


if __name__ == "__main__":
    main()
