"""Crash consistency: SIGKILL the writer at random points of builds and commits.

The child process indexes while a hook counts the I/O steps of the commit protocol
(file writes, fsyncs, renames) and SIGKILLs itself at a random one; after each crash,
CURRENT must open, every file it names must exist and read, and the next `index` must
reach the same rows as a full reindex.
"""

from __future__ import annotations

import random
import signal
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from engine_support import PY, make_settings, note_text, snapshot_rows, write
from search_support import chunk_keys, engine_docs

from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.indexer.eventlog import EventLog

CHILD = r"""
import os, random, signal, sys
from pathlib import Path
import pyarrow.parquet as pq
vault, index_dir, kill_at, seed = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
count = [0]
def step():
    count[0] += 1
    if count[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
def wrap(mod, name):
    orig = getattr(mod, name)
    def hooked(*a, **k):
        step()
        res = orig(*a, **k)
        step()
        return res
    setattr(mod, name, hooked)
for name in ("fsync", "replace", "write", "ftruncate", "link"):
    wrap(os, name)
wrap(pq, "write_table")
from vault_agent.config import load_settings
from vault_agent.indexer.build import build_index
s = load_settings({"vault": vault, "index_dir": index_dir}, env={})
rng = random.Random(seed)
for r in range(6):
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(60)
        p = vault / f"f{i % 4}" / f"n{i}.md"
        if rng.random() < 0.25 and p.exists():
            p.unlink()
        else:
            p.parent.mkdir(exist_ok=True)
            p.write_text(f"# N{i}\n\nround {r} {rng.random()}\n", encoding="utf-8")
    build_index(s, full=(r == 3))
print("survived", count[0])
"""


def _check_after_crash(vault: Path, index_dir: Path, tmp_path: Path, trial: int) -> None:
    s = make_settings(vault, index_dir)
    manifest = read_current_manifest(index_dir)
    assert manifest is not None, "CURRENT must always name a complete snapshot"
    for ref in manifest.segments:
        for f in ref.files.values():
            assert pq.read_table(index_dir / SEGMENTS_DIR / f).num_rows >= 0
    EventLog(index_dir).read_after(0)  # never raises on a torn tail
    assert engine_docs(index_dir) is not None  # the committed engine dir opens and answers
    after = build_index(s)
    assert after.snapshot_id >= manifest.snapshot_id
    full = make_settings(vault, tmp_path / f"full-{trial}")
    build_index(full, full=True)
    rows = snapshot_rows(index_dir)
    assert rows == snapshot_rows(full.index_dir)
    docs = engine_docs(index_dir)  # stored hit details included
    assert docs == engine_docs(full.index_dir)
    assert [d[:2] for d in docs] == chunk_keys(rows)


def _trials(tmp_path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    vault = tmp_path / "v"
    for i in range(40):
        write(vault, f"f{i % 4}/n{i}.md", note_text(i))
    index_dir = tmp_path / "idx"
    build_index(make_settings(vault, index_dir))
    # Count the steps of an uncrashed run once, so kill points cover the whole run.
    probe = subprocess.run(
        [PY, "-c", CHILD, str(vault), str(tmp_path / "probe-idx"), "0", "7"],
        capture_output=True,
        timeout=300,
        check=True,
    )
    total = int(probe.stdout.split()[-1])
    killed = 0
    for trial in range(n):
        kill_at = rng.randint(1, total)
        proc = subprocess.run(
            [PY, "-c", CHILD, str(vault), str(index_dir), str(kill_at), str(rng.randrange(1 << 30))],
            capture_output=True,
            timeout=300,
        )
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.decode()[-2000:]
        killed += proc.returncode == -signal.SIGKILL
        _check_after_crash(vault, index_dir, tmp_path, trial)
    assert killed >= n // 2


def test_crash_consistency_ci(tmp_path: Path) -> None:
    _trials(tmp_path, 5, seed=1)


@pytest.mark.slow
def test_crash_consistency_50_trials(tmp_path: Path) -> None:
    _trials(tmp_path, 50, seed=2)
