"""The snapshot is a public format: docs/indexer.md's DuckDB example reads it from outside.

The example is taken from the docs as written and run in a child Python that never imports
vault_agent (checked), against the state dir of a real `vault-agent serve --watch` whose
watcher commits an edit after another meanwhile. Each run must see one consistent
snapshot: its live rows add up to the manifest's own totals, which the writer keeps
incrementally, and every note of the vault appears exactly once. Meanwhile serve logs no
line per commit.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

from api.processkit import ServeChild, write_notes
from testkit import wait_until

from vault_agent.freshness import read_current_manifest

ROOT = Path(__file__).resolve().parents[2]
CHECK = """
import json, runpy, sys
example = runpy.run_path(sys.argv[1])
with example["current_snapshot"](sys.argv[2]) as (con, manifest):
    out = {
        "snapshot_id": manifest["snapshot_id"],
        "totals": [manifest["note_count"], manifest["chunk_count"], manifest["heading_count"]],
        "rows": [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("notes", "chunks", "headings")],
        "paths": sorted(p for (p,) in con.execute("SELECT path FROM notes").fetchall()),
        "tagged": con.execute("SELECT count(DISTINCT path) FROM tags WHERE tag = 't1' AND exact").fetchone()[0],
    }
assert not [m for m in sys.modules if m.split(".")[0] == "vault_agent"], "the example imported vault_agent"
print(json.dumps(out))
"""


def _example(tmp_path: Path) -> Path:
    doc = (ROOT / "docs" / "indexer.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- snapshot-example -->\n```python\n(.*?)```", doc, re.S)
    assert found, "docs/indexer.md lost its snapshot example"
    assert "vault_agent" not in found.group(1)
    script = tmp_path / "read_snapshot.py"
    script.write_text(found.group(1), encoding="utf-8")
    return script


def test_the_documented_duckdb_example_reads_snapshots_while_serve_commits(tmp_path: Path) -> None:
    vault, state = tmp_path / "v", tmp_path / "state"
    write_notes(vault, 40)
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    script = _example(tmp_path)
    serve = ServeChild("--watch", "--vault", str(vault), "--index-dir", str(state))
    stop = threading.Event()

    def editor() -> None:
        k = 0
        while not stop.wait(0.05):
            text = f"---\ntags: [t{k % 7}]\n---\n# Edited {k}\n\n## part {k}\n\nbody {k}\n"
            (vault / notes[k % len(notes)]).write_text(text, encoding="utf-8")
            k += 1

    try:
        wait_until(lambda: read_current_manifest(state) is not None, 60, "the first snapshot")
        first = read_current_manifest(state)
        assert first is not None
        thread = threading.Thread(target=editor)
        thread.start()
        seen: set[int] = set()
        try:
            for _ in range(8):
                run = subprocess.run(
                    [sys.executable, "-c", CHECK, str(script), str(state)],
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                assert run.returncode == 0, run.stderr[-2000:]
                out = json.loads(run.stdout)
                assert out["rows"] == out["totals"], out  # tombstones applied, one snapshot
                assert out["paths"] == notes
                seen.add(out["snapshot_id"])

            def commits_so_far() -> int:
                now = read_current_manifest(state)
                return 0 if now is None else now.snapshot_id - first.snapshot_id

            # Enough commits behind the log check below, however slowly the reads ran.
            wait_until(lambda: commits_so_far() >= 8, 120, "eight commits under the edits")
        finally:
            stop.set()
            thread.join(30)
        commits = commits_so_far()
        assert max(seen) > first.snapshot_id and len(seen) > 1  # it read snapshots as they came
        plain = subprocess.run(
            [sys.executable, str(script), str(state)], capture_output=True, text=True, timeout=120, check=True
        )
        summary = json.loads(plain.stdout)  # the example's own output, as a user runs it
        assert summary["rows"]["notes"] == len(notes) and summary["top_tags"]
        assert not list((state / "readers").glob("*-read_snapshot.json"))  # its lease went with it
    finally:
        serve.stop()
    # Steady state logs no line per commit at the default level (issue 32 item 6).
    others = [ln for ln in serve.logs() if ln.get("event") != "request"]
    assert commits >= 8 and len(others) <= 2, others
