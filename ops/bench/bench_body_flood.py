"""Memory of `vault-agent serve` under a flood of large request bodies (issue 20, item 4).

    nice -n 5 .venv/bin/python ops/bench/bench_body_flood.py --rounds 3

60 clients each POST a 4 MiB JSON-RPC `tools/call` to `/mcp` at once (one MCP session,
initialized first), and the server's peak resident set (VmHWM) is compared with its RSS
before the flood. Side by side in one run, alternating per round: the default body budget
(`VAULT_AGENT_MAX_BODY_BUFFER_MB` unset: 16 MiB) and a budget so large it never binds (the
behaviour before the budget existed). Each server is a fresh process on a copy of the
fixture vault with a built index and embeddings off. Prints JSON: per budget the median
RSS before, peak, peak growth and wall time of the flood, the answers' status counts, and
the load average before and after.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import benchkit

REPO = Path(__file__).resolve().parents[2]
VAULT_AGENT = str(Path(sys.executable).parent / "vault-agent")
BODY_BYTES = 4 * 1024 * 1024 - 512  # just under the 4 MiB cap
UNBOUNDED_MB = 1 << 16


def proc_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("POST", "/mcp", body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def one_server(vault: Path, budget_mb: int | None, clients: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    env["VAULT_AGENT_SEMANTIC"] = "off"
    if budget_mb is not None:
        env["VAULT_AGENT_MAX_BODY_BUFFER_MB"] = str(budget_mb)
    proc = subprocess.Popen(
        [VAULT_AGENT, "serve", "--vault", str(vault), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        token = (vault / ".vault-agent" / "token").read_text().strip()
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Host": f"127.0.0.1:{port}",
        }
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
        status, got, _ = post(port, json.dumps(init).encode(), headers)
        assert status == 200, status
        headers["Mcp-Session-Id"] = got.get("mcp-session-id") or got["Mcp-Session-Id"]
        headers["Mcp-Protocol-Version"] = "2025-06-18"
        post(port, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), headers)
        before = proc_kib(proc.pid, "VmRSS")
        statuses: list[int] = []
        lock = threading.Lock()

        def client(i: int) -> None:
            pad = BODY_BYTES - 200
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": i + 1,
                    "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": "q" * pad}},
                }
            ).encode()
            code, _, _ = post(port, body, headers)
            with lock:
                statuses.append(code)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        peak = proc_kib(proc.pid, "VmHWM")
        return {
            "rss_before_mb": round(before / 1024, 1),
            "peak_mb": round(peak / 1024, 1),
            "growth_mb": round((peak - before) / 1024, 1),
            "flood_s": round(wall, 2),
            "statuses": {str(k): statuses.count(k) for k in sorted(set(statuses))},
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()


def main() -> int:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=60)
    args = benchkit.parse(ap, smoke={"rounds": 1, "clients": 3})
    load_before = benchkit.load_line()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(
            REPO / "fixtures" / "orientation", vault, ignore=shutil.ignore_patterns(".vault-agent")
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
        env["VAULT_AGENT_SEMANTIC"] = "off"
        subprocess.run(
            [VAULT_AGENT, "index", "--vault", str(vault)], check=True, env=env, capture_output=True
        )
        runs: dict[str, list[dict[str, Any]]] = {"default_budget": [], "unbounded": []}
        for _ in range(args.rounds):
            runs["default_budget"].append(one_server(vault, None, args.clients))
            runs["unbounded"].append(one_server(vault, UNBOUNDED_MB, args.clients))
    out: dict[str, Any] = {"clients": args.clients, "body_bytes": BODY_BYTES, "load_before": load_before}
    for name, rs in runs.items():
        out[name] = {
            key: statistics.median(r[key] for r in rs)
            for key in ("rss_before_mb", "peak_mb", "growth_mb", "flood_s")
        } | {"statuses": rs[-1]["statuses"]}
    out["growth_ratio_unbounded_over_budget"] = round(
        out["unbounded"]["growth_mb"] / max(out["default_budget"]["growth_mb"], 0.1), 2
    )
    out["load_after"] = benchkit.load_line()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
